import type { Served } from "../../dispatch/with-failover.ts";
import { servedHeaders } from "../response-headers.ts";

/** The headers every model endpoint answers with: rate-limit state and which channel served. */
export function modelResponseHeaders(rateLimitHeaders: Record<string, string>, served: Served<unknown>): Record<string, string> {
  return { ...rateLimitHeaders, ...servedHeaders(served) };
}
