import { GatewayError } from "../errors/gateway-error.ts";

/** How long a caller is asked to wait: long enough not to hammer, short enough to notice the end. */
const RETRY_AFTER_SECONDS = 60;

/**
 * The 503 every model endpoint answers while `features.maintenance_mode` is on; the admin
 * API, /health and /ready keep answering, so an operator can switch it off again.
 */
export function maintenanceRefusal(): GatewayError {
  return new GatewayError(503, "The gateway is down for maintenance; try again later", { "retry-after": String(RETRY_AFTER_SECONDS) });
}
