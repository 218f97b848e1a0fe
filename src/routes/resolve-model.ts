import type { Principal } from "../auth/key-cache.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ModelMode } from "../pricing/price.ts";
import type { Services } from "../services.ts";

/**
 * Checks that the caller may use `model` on an endpoint of `mode`: 404 when no channel
 * serves it or the key is limited to other models, 400 when it serves another endpoint.
 */
export function assertModelUsable(services: Services, principal: Principal, model: string, mode: ModelMode): void {
  const served = services.channels.candidatesFor(model).length > 0;
  if (!served || (principal.models !== null && !principal.models.has(model))) {
    throw new GatewayError(404, `The model '${model}' does not exist or you do not have access to it`);
  }
  const modelMode = services.prices.get(model)?.mode ?? "chat";
  if (modelMode !== mode) {
    throw new GatewayError(400, `The model '${model}' serves ${modelMode} requests and cannot be used on this endpoint`);
  }
}
