import type { Principal } from "../../auth/key-cache.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import type { ModelMode } from "../../pricing/price.ts";
import type { Services } from "../../services.ts";

/**
 * The model for a request that names none (images, speech, transcription may omit it): the
 * latest model of `mode` this key may use, latest meaning the one most recently made
 * available (its first channel's creation, the `created` of /v1/models), ties to the
 * highest ID. 400 when there is none.
 */
export function defaultModelFor(services: Services, principal: Principal, mode: ModelMode): string {
  let best: { id: string; created: number } | null = null;
  for (const id of services.channels.models) {
    if ((services.prices.get(id)?.mode ?? "chat") !== mode) continue;
    if (principal.models !== null && !principal.models.has(id)) continue;
    const channels = services.channels.candidatesFor(id);
    if (channels.length === 0) continue;
    const created = Math.min(...channels.map((c) => c.createdAt));
    if (!best || created > best.created || (created === best.created && id > best.id)) best = { id, created };
  }
  if (!best) throw badRequest(`'model' is required: no ${mode} model is available to this key`);
  return best.id;
}
