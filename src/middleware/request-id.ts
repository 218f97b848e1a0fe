import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";
import { newId } from "../lib/random-id.ts";

const REQUEST_ID_HEADERS = ["x-request-id", "request-id"] as const;

/**
 * The response headers that carry a request's id: `x-request-id`, which the OpenAI SDK reads,
 * and `request-id`, which Anthropic's API sends and its SDK reads (`_request_id`, errors' `requestID`).
 */
export function requestIdHeaders(id: string): Record<string, string> {
  return { [REQUEST_ID_HEADERS[0]]: id, [REQUEST_ID_HEADERS[1]]: id };
}


/** Gives every request an id, echoed in requestIdHeaders and written to its usage row. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newId("req");
    c.set("requestId", id);
    for (const name of REQUEST_ID_HEADERS) c.header(name, id);
    await next();
  };
}
