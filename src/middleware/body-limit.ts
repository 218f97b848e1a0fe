import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import type { AppEnv } from "../app-env.ts";
import { bodyCutOff, GatewayError } from "../errors/gateway-error.ts";

/**
 * Refuses bodies over `maxBytes` with 413: at once from Content-Length, or as soon as a
 * chunked body passes the limit, never after reading it all. Paths in `except` (the audio
 * uploads) enforce their own, larger limit while streaming to disk. A chunked body is read
 * here, so a client that hangs up in the middle of one is answered 499 here too.
 */
export function bodyLimit(maxBytes: number, except: readonly string[] = []): MiddlewareHandler<AppEnv> {
  const limit = honoBodyLimit({
    maxSize: maxBytes,
    onError() {
      throw new GatewayError(413, `Request body is larger than the limit of ${maxBytes} bytes`);
    },
  });
  const exempt = new Set(except);
  return async function bodyLimit(c, next) {
    if (exempt.has(c.req.path)) return next();
    let handled = false;
    try {
      return await limit(c, () => {
        handled = true;
        return next();
      });
    } catch (error) {
      if (handled || error instanceof GatewayError) throw error;
      throw bodyCutOff();
    }
  };
}
