import type { TokenRow, UserRow } from "../db/schema.ts";
import { maskSecret, type Channel } from "../channels/channel.ts";
import { microsToUsd } from "../lib/money.ts";
import { isoOf, isoOrNull } from "../lib/time.ts";

/** A spec 2.12 user record (plus plan). */
export function userView(user: UserRow) {
  return {
    id: user.id,
    email: user.email,
    status: user.status,
    balance: microsToUsd(user.balance_micros),
    total_usage: microsToUsd(user.total_spent_micros),
    created_at: isoOf(user.created_at),
    plan: user.plan,
    updated_at: isoOf(user.updated_at),
  };
}

/** The status a token shows: `expired` once its expiry passed, whatever is stored. */
function tokenStatus(token: TokenRow, now: number): string {
  if (token.status === "active" && token.expires_at !== null && token.expires_at <= now) return "expired";
  return token.status;
}

/**
 * A spec 2.12 token record (plus role, display prefix, expiry, model list and limits). Never
 * the key or its hash. `lastUsed` is the in-memory time not yet written, when newer.
 */
export function tokenView(token: TokenRow, now: number, lastUsed?: number) {
  const used = Math.max(token.last_used ?? 0, lastUsed ?? 0);
  return {
    id: token.id,
    name: token.name,
    user_id: token.user_id,
    permissions: JSON.parse(token.permissions_json) as string[],
    status: tokenStatus(token, now),
    created_at: isoOf(token.created_at),
    last_used: used === 0 ? null : isoOf(used),
    role: token.role,
    key_prefix: token.key_prefix,
    expires_at: isoOrNull(token.expires_at),
    models: token.models_json === null ? null : (JSON.parse(token.models_json) as string[]),
    requests_per_minute: token.requests_per_minute,
    tokens_per_minute: token.tokens_per_minute,
  };
}

/**
 * A base URL with its credential masked: an upstream behind basic auth takes it in the URL
 * (`https://user:password@host/v1`), and it is as secret as the API key. A user name alone
 * is the credential of providers that take a token so (`https://TOKEN@host`), and is masked.
 */
function withoutCredential(baseUrl: string | null): string | null {
  if (baseUrl === null || !baseUrl.includes("@")) return baseUrl;
  const url = new URL(baseUrl);
  if (url.password !== "") url.password = "****";
  else if (url.username !== "") url.username = "****";
  else return baseUrl;
  return url.href;
}

/** A spec 2.12 channel record (plus its routing fields); the upstream secret masked. */
export function channelView(channel: Channel, cooling = false) {
  return {
    id: channel.id,
    name: channel.name,
    status: channel.status === "active" && cooling ? "cooling" : channel.status,
    models: channel.models,
    priority: channel.priority,
    type: channel.type,
    base_url: withoutCredential(channel.baseUrl),
    weight: channel.weight,
    model_map: channel.modelMap,
    api_key: maskSecret(channel.apiKey),
    created_at: isoOf(channel.createdAt),
  };
}
