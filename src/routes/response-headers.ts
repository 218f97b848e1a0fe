import type { Served } from "../dispatch/with-failover.ts";

/** Headers of a Server-Sent Events response that proxies must not buffer. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

/** The headers every model endpoint answers with: rate-limit state and which channel served. */
export function modelResponseHeaders(rateLimitHeaders: Record<string, string>, served: Served<unknown>): Record<string, string> {
  return { ...rateLimitHeaders, ...servedHeaders(served) };
}

/** Which channel served a request and after how many attempts; ids only, no secrets. */
export function servedHeaders(served: Served<unknown>): Record<string, string> {
  const headers: Record<string, string> = { "x-gateway-channel": served.channel.id, "x-gateway-attempts": String(served.attempts) };
  if (served.warnings) headers["x-gateway-warnings"] = served.warnings;
  return headers;
}
