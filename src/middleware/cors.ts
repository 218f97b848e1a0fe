import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.ts";

/** Which origins may call the gateway from a browser (GATEWAY_CORS_ORIGINS): every one, the listed ones, or none. */
export type CorsOrigins = "*" | "none" | readonly string[];

/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = "86400";
const METHODS = "GET, POST, PATCH, DELETE, OPTIONS";

/**
 * Cross-origin calls from a browser, as the official SDKs make them there (the openai SDK's
 * `dangerouslyAllowBrowser`, Anthropic's `anthropic-dangerous-direct-browser-access`, the genai
 * SDK on the web): a preflight (OPTIONS with Access-Control-Request-Method) is answered 204
 * before any key is asked for, since a browser sends none with it, allowing the headers it
 * names; every other answer to a browser (errors too) says the origin may read it, all its
 * headers included (request ids, rate limits, warnings). The keys travel in headers, never in
 * cookies, so allowing an origin lets it use only keys it already holds. A request without an
 * Origin header (every server-side client) gets nothing added and pays one header read.
 */
export function cors(origins: CorsOrigins): MiddlewareHandler<AppEnv> {
  const allowed = (origin: string): string | null => {
    if (origins === "*") return "*";
    if (origins === "none") return null;
    return origins.includes(origin) ? origin : null;
  };
  return async function cors(c, next) {
    const origin = c.req.header("origin");
    if (origin === undefined) return next();
    const allowOrigin = allowed(origin);
    const vary: Record<string, string> = origins === "*" ? {} : { vary: "Origin" };
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined) {
      if (allowOrigin === null) return new Response(null, { status: 204, headers: vary });
      const headers: Record<string, string> = {
        "access-control-allow-origin": allowOrigin,
        "access-control-allow-methods": METHODS,
        "access-control-max-age": PREFLIGHT_MAX_AGE,
        ...vary,
      };
      const requested = c.req.header("access-control-request-headers");
      if (requested) headers["access-control-allow-headers"] = requested;
      return new Response(null, { status: 204, headers });
    }
    await next();
    if (allowOrigin === null) return;
    try {
      c.res.headers.set("access-control-allow-origin", allowOrigin);
    } catch {
      // A Response whose headers cannot change (one a fetch made) is copied first.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("access-control-allow-origin", allowOrigin);
    }
    c.res.headers.set("access-control-expose-headers", "*");
    if (origins !== "*") c.res.headers.append("vary", "Origin");
  };
}
