import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Principal } from "../auth/key-cache.ts";
import type { Logger } from "../lib/logger.ts";

/**
 * Bodies still being written when the head is sent, so the line's duration is to the head
 * only: streams that tell proxies not to buffer them (a chat's Server-Sent Events or a Gemini
 * caller's JSON array, and speech, transcripts and images streamed as events), and speech,
 * whose audio flows through as the upstream sends it.
 */
function isStreamed(headers: Headers): boolean {
  return headers.get("x-accel-buffering") === "no" || headers.get("content-type")?.startsWith("audio/") === true;
}

/**
 * The access log (GATEWAY_LOG_REQUESTS=1): one line per request, written when its response
 * head is ready. Ids, numbers and the path only: never a header or the query string, where
 * Gemini callers may put their key (`?key=`). The serving channel and its attempts are read
 * from the x-gateway-* headers every served model response carries.
 */
export function accessLog(log: Logger, now: () => number): MiddlewareHandler<AppEnv> {
  return async function accessLog(c, next) {
    const startedAt = now();
    await next();
    const { headers, status } = c.res;
    const channelId = headers.get("x-gateway-channel");
    log.info("request", {
      method: c.req.method,
      path: c.req.path,
      status,
      duration_ms: now() - startedAt,
      stream: isStreamed(headers) || undefined,
      request_id: c.get("requestId"),
      token_id: (c.get("principal") as Principal | undefined)?.tokenId,
      channel_id: channelId ?? undefined,
      attempts: channelId === null ? undefined : Number(headers.get("x-gateway-attempts")),
    });
  };
}
