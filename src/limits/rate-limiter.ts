import type { Principal } from "../auth/key-cache.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Settings } from "../settings/settings-schema.ts";
import { TokenBucket } from "./token-bucket.ts";

/** Requests and tokens per minute; 0 means no limit. */
export interface Limits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

/** A granted request: its rate-limit headers, and how to settle its token reservation. */
export interface RateGrant {
  headers: Record<string, string>;
  /** Settles the token reservation to what the request really used. */
  settle(actualTokens: number): void;
}

/** The limits for a key: its own overrides, else its account's plan, else the default plan. */
export function limitsFor(principal: Principal, settings: Settings): Limits {
  // Own keys only: a plan named `constructor` must not find Object.prototype's.
  const plan = Object.hasOwn(settings.plans, principal.plan) ? settings.plans[principal.plan]! : settings.rate_limits;
  return {
    requestsPerMinute: principal.requestsPerMinute ?? plan.requests_per_minute,
    tokensPerMinute: principal.tokensPerMinute ?? plan.tokens_per_minute,
  };
}

/** A duration in OpenAI's header style: "6s", "1m0s", "120ms". */
function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  return `${Math.floor(seconds / 60)}m${Number((seconds % 60).toFixed(3))}s`;
}

interface Buckets {
  requests: TokenBucket | null;
  tokens: TokenBucket | null;
}

/**
 * Requests-per-minute and tokens-per-minute limits, in memory per instance. Counted per
 * account, except for a key with its own override, which has buckets of its own. A token
 * limit reserves the request's estimate (prompt + max_tokens) and settles to actual usage.
 */
export class RateLimiter {
  #buckets = new Map<string, Buckets>();

  constructor(private readonly now: () => number) {}

  /** Admits a request estimated at `estimatedTokens`, or throws 429 with Retry-After. */
  admit(principal: Principal, limits: Limits, estimatedTokens: number): RateGrant {
    const now = this.now();
    const ownBuckets = principal.requestsPerMinute !== null || principal.tokensPerMinute !== null;
    const buckets = this.#bucketsFor(ownBuckets ? `key:${principal.tokenId}` : `user:${principal.userId}`, limits, now);
    const tokens = Math.min(estimatedTokens, buckets.tokens?.capacity ?? estimatedTokens);
    const waitRequests = buckets.requests?.msUntil(1, now) ?? 0;
    // A request that reserves no tokens (a token count) does not wait for a bucket in debt.
    const waitTokens = tokens > 0 ? (buckets.tokens?.msUntil(tokens, now) ?? 0) : 0;
    if (waitRequests > 0 || waitTokens > 0) {
      const which = waitRequests > 0 ? "requests" : "tokens";
      throw new GatewayError(429, `Rate limit reached for ${which} per minute; retry after ${duration(Math.max(waitRequests, waitTokens))}`, {
        "retry-after": String(Math.max(1, Math.ceil(Math.max(waitRequests, waitTokens) / 1000))),
        ...this.#headers(buckets, now),
      });
    }
    buckets.requests?.tryTake(1, now);
    buckets.tokens?.tryTake(tokens, now);
    return {
      headers: this.#headers(buckets, now),
      settle: (actual) => buckets.tokens?.adjust(tokens - actual, this.now()),
    };
  }

  #bucketsFor(id: string, limits: Limits, now: number): Buckets {
    let buckets = this.#buckets.get(id);
    // A changed limit starts a fresh bucket at the new capacity.
    if (!buckets || (buckets.requests?.capacity ?? 0) !== limits.requestsPerMinute || (buckets.tokens?.capacity ?? 0) !== limits.tokensPerMinute) {
      buckets = {
        requests: limits.requestsPerMinute > 0 ? new TokenBucket(limits.requestsPerMinute, now) : null,
        tokens: limits.tokensPerMinute > 0 ? new TokenBucket(limits.tokensPerMinute, now) : null,
      };
      this.#buckets.set(id, buckets);
    }
    return buckets;
  }

  #headers(buckets: Buckets, now: number): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, bucket] of [["requests", buckets.requests], ["tokens", buckets.tokens]] as const) {
      if (!bucket) continue;
      headers[`x-ratelimit-limit-${name}`] = String(bucket.capacity);
      headers[`x-ratelimit-remaining-${name}`] = String(Math.max(0, Math.floor(bucket.level(now))));
      headers[`x-ratelimit-reset-${name}`] = duration(bucket.msUntilFull(now));
    }
    return headers;
  }
}
