import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Principal } from "../auth/key-cache.ts";
import type { Permission } from "../auth/permissions.ts";
import { requireApiKey } from "../auth/authenticate.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ModelMode } from "../pricing/price.ts";
import type { Services } from "../services.ts";

/** The permission a model of each mode needs. */
const PERMISSION_OF_MODE: Record<ModelMode, Permission> = {
  chat: "chat",
  embedding: "embeddings",
  rerank: "rerank",
  image: "images",
  speech: "audio",
  transcription: "audio",
};

/** A spec 2.5 model record, or null when the caller may not use the model. */
function modelView(services: Services, principal: Principal, id: string) {
  const channels = services.channels.candidatesFor(id);
  if (channels.length === 0) return null;
  if (principal.models !== null && !principal.models.has(id)) return null;
  const mode = services.prices.get(id)?.mode ?? "chat";
  if (!principal.permissions.has(PERMISSION_OF_MODE[mode])) return null;
  const created = Math.min(...channels.map((c) => c.createdAt));
  return { id, object: "model", created: Math.floor(created / 1000), owned_by: channels[0]!.type, mode };
}

/** GET /v1/models and /v1/models/{id}: what the calling key may use. */
export function modelRoutes(services: Services) {
  const auth = requireApiKey({ keys: services.keys, lastUsed: services.lastUsed, now: services.now });
  return new Hono<AppEnv>()
    .get("/v1/models", auth, (c) => {
      const principal = c.get("principal");
      const data = [...services.channels.models]
        .sort()
        .map((id) => modelView(services, principal, id))
        .filter((m) => m !== null);
      return c.json({ object: "list", data });
    })
    .get("/v1/models/:model{.+}", auth, (c) => {
      const model = modelView(services, c.get("principal"), c.req.param("model"));
      if (!model) throw new GatewayError(404, `The model '${c.req.param("model")}' does not exist or you do not have access to it`);
      return c.json(model);
    });
}
