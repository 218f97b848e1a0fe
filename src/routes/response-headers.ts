import type { Served } from "../dispatch/with-failover.ts";
import { requestIdHeaders } from "../middleware/request-id.ts";

/** Headers of a Server-Sent Events response that proxies must not buffer. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

/** What a model endpoint's 200 carries besides its body: rate-limit state, the serving channel and the request id. */
export interface ModelResponseMeta {
  rateLimitHeaders: Record<string, string>;
  served: Served<unknown>;
  requestId: string;
}

/**
 * A model endpoint's 200: `headers` (its content type) and the meta, given all at once.
 * Hono's c.json and c.body set them one by one on a Headers object, which was a few percent
 * of a request's CPU at 10k req/s.
 */
export function modelResponse(body: BodyInit, headers: Record<string, string>, meta: ModelResponseMeta): Response {
  return new Response(body, {
    status: 200,
    headers: { ...headers, ...meta.rateLimitHeaders, ...servedHeaders(meta.served), ...requestIdHeaders(meta.requestId) },
  });
}

/** modelResponse with a JSON body. */
export function modelJsonResponse(body: unknown, meta: ModelResponseMeta): Response {
  return modelResponse(JSON.stringify(body), { "content-type": "application/json" }, meta);
}

/** Which channel served a request and after how many attempts; ids only, no secrets. */
function servedHeaders(served: Served<unknown>): Record<string, string> {
  const headers: Record<string, string> = { "x-gateway-channel": served.channel.id, "x-gateway-attempts": String(served.attempts) };
  if (served.warnings) headers["x-gateway-warnings"] = served.warnings;
  return headers;
}
