import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";
import { newId } from "../lib/random-id.ts";

/** Gives every request an id, echoed as `x-request-id` and written to its usage row. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newId("req");
    c.set("requestId", id);
    c.header("x-request-id", id);
    await next();
  };
}
