import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { MessagesRequestSchema } from "../../translate/anthropic-messages/request-schema.ts";
import { convertAnthropicRequestToCanonical } from "../../translate/anthropic-messages/convert-request-to-canonical.ts";
import { convertCanonicalToAnthropicResponse } from "../../translate/anthropic-messages/convert-response.ts";
import { renderAnthropicEvents } from "../../translate/anthropic-messages/convert-stream.ts";
import { relayAnthropicEvents } from "../../translate/anthropic-messages/relay-native.ts";
import { serveChat } from "./serve-chat.ts";

/** POST /v1/messages (spec 4.2): messages-style chat, plain and streamed. */
export function messagesRoutes(services: Services) {
  const auth = { keys: services.keys, lastUsed: services.lastUsed, now: services.now };
  return new Hono<AppEnv>().post("/v1/messages", requireApiKey(auth, "chat"), async (c) => {
    const body = parseOrThrow(MessagesRequestSchema, await readJsonBody(c.req.raw));
    const canonical = convertAnthropicRequestToCanonical(body);
    // Beta features are asked for in a header; an anthropic upstream needs it to honour them.
    const beta = c.req.header("anthropic-beta");
    const request = beta ? { ...canonical, native: { ...canonical.native!, headers: { "anthropic-beta": beta } } } : canonical;
    return serveChat(c, services, request, {
      renderResponse: convertCanonicalToAnthropicResponse,
      renderStream: renderAnthropicEvents,
      relayStream: relayAnthropicEvents,
      modelField: "model",
    });
  });
}
