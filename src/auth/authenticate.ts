import type { Context, MiddlewareHandler } from "hono";
import { GatewayError } from "../errors/gateway-error.ts";
import type { AppEnv } from "../app-env.ts";
import type { Permission } from "./permissions.ts";
import type { KeyCache, Principal } from "./key-cache.ts";
import type { LastUsedTracker } from "./last-used.ts";
import type { SettingsStore } from "../settings/settings-store.ts";
import { maintenanceRefusal } from "../settings/maintenance.ts";

/**
 * The key a request presents: `Authorization: Bearer`, or for SDK drop-in `x-api-key`
 * (Anthropic), `x-goog-api-key` or `?key=` (Gemini). An Authorization header that is not
 * a Bearer credential is malformed and rejected rather than skipped.
 */
export function presentedKey(c: Context): string | null {
  const authorization = c.req.header("authorization");
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new GatewayError(401, "Malformed Authorization header; expected 'Bearer <API_KEY>'");
    return match[1]!;
  }
  return c.req.header("x-api-key") ?? c.req.header("x-goog-api-key") ?? c.req.query("key") ?? null;
}

interface AuthOptions {
  keys: KeyCache;
  lastUsed: LastUsedTracker;
  now: () => number;
}

/** Throws the 401 that fits a key that exists but cannot be used now. */
function assertUsable(principal: Principal, now: number): void {
  if (principal.tokenStatus === "revoked") throw new GatewayError(401, "This API key has been revoked");
  if (principal.tokenStatus === "disabled") throw new GatewayError(401, "This API key is disabled");
  if (principal.expiresAt !== null && principal.expiresAt <= now) throw new GatewayError(401, "This API key has expired");
  if (principal.userStatus !== "active") throw new GatewayError(401, "The account of this API key is suspended");
}

/**
 * The request's principal, or the 401 for a missing, invalid or unusable key; `missingKey` is
 * the message when no key came: it names the kind of key the endpoint takes. `refuse` may
 * refuse a usable key before its use is recorded (maintenance mode).
 */
async function authenticate(c: Context<AppEnv>, options: AuthOptions, missingKey: string, refuse?: () => void): Promise<Principal> {
  const key = presentedKey(c);
  if (key === null) throw new GatewayError(401, missingKey);
  const principal = await options.keys.resolve(key);
  if (!principal) throw new GatewayError(401, "Invalid API key");
  const now = options.now();
  assertUsable(principal, now);
  refuse?.();
  options.lastUsed.touch(principal.tokenId, now);
  c.set("principal", principal);
  return principal;
}

/** What a model endpoint's gate reads: the keys, and the settings for maintenance mode. */
interface ApiKeyOptions extends AuthOptions {
  settings: Pick<SettingsStore, "current">;
}

/**
 * Middleware for model endpoints: an API key (not a management key), with `permission` when
 * given. While the gateway is in maintenance a usable key is refused with the 503, before it
 * is rate limited or held for; a missing, invalid or expired one is still the 401 of spec 5.4.
 */
export function requireApiKey(options: ApiKeyOptions, permission?: Permission): MiddlewareHandler<AppEnv> {
  const refuseInMaintenance = () => {
    if (options.settings.current.features.maintenance_mode) throw maintenanceRefusal();
  };
  return async function apiKeyAuth(c, next) {
    const principal = await authenticate(c, options, "Missing API key; send 'Authorization: Bearer <API_KEY>'", refuseInMaintenance);
    if (principal.role !== "user") {
      throw new GatewayError(403, "Management keys cannot call model endpoints; use an API key");
    }
    if (permission && !principal.permissions.has(permission)) {
      throw new GatewayError(403, `This API key lacks the '${permission}' permission`);
    }
    await next();
  };
}

/** Middleware for /v1/admin/*: a management key. */
export function requireManagementKey(options: AuthOptions): MiddlewareHandler<AppEnv> {
  return async function managementKeyAuth(c, next) {
    // Spec 5.3 names it so; "Missing API key" sent an operator to look for the wrong key.
    const principal = await authenticate(c, options, "Missing management key; send 'Authorization: Bearer <MANAGEMENT_API_KEY>'");
    if (principal.role !== "management") {
      throw new GatewayError(403, "This endpoint needs a management key");
    }
    await next();
  };
}
