import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import type { AppEnv } from "../app-env.ts";
import { bodyCutOff, bodyTimedOut, GatewayError } from "../errors/gateway-error.ts";
import { settleWithin, TIMED_OUT } from "../streams/settle-within.ts";

/**
 * Refuses bodies over `maxBytes` with 413: at once from Content-Length, or as soon as a
 * chunked body passes the limit, never after reading it all. Paths in `except` (the audio
 * uploads) enforce their own, larger limit while streaming to disk. A chunked body is read
 * here, so a client that hangs up in the middle of one is answered 499 here too, and one
 * that has not sent it whole within `timeoutMs` 408 (a Content-Length body is read, under
 * the same limit, by the route).
 */
export function bodyLimit(maxBytes: number, timeoutMs: number, except: readonly string[] = []): MiddlewareHandler<AppEnv> {
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
    let timedOut = false;
    let routeStarted: (() => void) | undefined;
    const limited = limit(c, () => {
      // The rest of a body that came after its 408 was sent: the route must not serve (and bill) it.
      if (timedOut) throw bodyTimedOut(timeoutMs);
      handled = true;
      routeStarted?.();
      return next();
    });
    try {
      // Hono's limit calls the route at once for a Content-Length body (nothing more to do); a chunked one it reads first.
      if (!handled) {
        const reading = new Promise<void>((resolve) => (routeStarted = resolve));
        if ((await settleWithin(Promise.race([reading, limited]), timeoutMs)) === TIMED_OUT && !handled) {
          // The read goes on until the connection closes, which the 408 asks for; its end is nobody's concern.
          timedOut = true;
          limited.catch(() => {});
          throw bodyTimedOut(timeoutMs);
        }
      }
      return await limited;
    } catch (error) {
      if (handled || error instanceof GatewayError) throw error;
      throw bodyCutOff();
    }
  };
}
