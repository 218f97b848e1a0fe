import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import type { AppEnv } from "../app-env.ts";
import { GatewayError } from "../errors/gateway-error.ts";

/**
 * Refuses bodies over `maxBytes` with 413: at once from Content-Length, or as soon as a
 * chunked body passes the limit, never after reading it all.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  return honoBodyLimit({
    maxSize: maxBytes,
    onError() {
      throw new GatewayError(413, `Request body is larger than the limit of ${maxBytes} bytes`);
    },
  });
}
