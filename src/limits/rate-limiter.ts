import type { Principal } from "../auth/key-cache.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Settings } from "../settings/settings-schema.ts";
import { levelAt, TokenBucket } from "./token-bucket.ts";

/** Requests and tokens per minute; 0 means no limit. */
export interface Limits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

/** A granted request: its rate-limit headers, and how to settle its token reservation. */
export interface RateGrant {
  headers: Record<string, string>;
  /** Settles the token reservation to what the request really used; once per grant, which holds its bucket until then. */
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

/**
 * Whether a response also names its rate-limit state as Anthropic's API does
 * (anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}), for a caller of the
 * messages format. Beside OpenAI's x-ratelimit-* names, not in place of them: those are the
 * gateway's own, sent to every caller of every format, so code that reads them works
 * whatever format it speaks, and a client ignores names it does not know. The gateway's one
 * token bucket counts input and output together, as Anthropic's tokens-* trio does; Anthropic's
 * input-tokens-* and output-tokens-* trios are not sent, since no such separate limit exists
 * here and a client would read each as a budget of its own.
 */
export type AnthropicNames = boolean;

/** A duration in OpenAI's header style: "6s", "1m0s", "120ms". */
function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${Number(seconds.toFixed(3))}s`;
  return `${Math.floor(seconds / 60)}m${Number((seconds % 60).toFixed(3))}s`;
}

/** What one bucket admitted, for the exchange between instances (see RateExchange), with its limits. */
export interface BucketUsage extends Limits {
  /** `user:<id>`, or `key:<id>` for a key with its own limits. */
  bucket: string;
  requests: number;
  /** Net of settlement: a reservation settled to actual usage counts the actual. */
  tokens: number;
}

/** A bucket's levels at `at` as one instance had them, with its limits; null: no such limit. */
export interface BucketLevels extends Limits {
  bucket: string;
  requestsLevel: number | null;
  tokensLevel: number | null;
  at: number;
}

/** What the exchange writes of a bucket: what it admitted since the last take, and its levels now. */
export type PublishedBucket = BucketUsage & Omit<BucketLevels, "at">;

/** A time as Anthropic's reset headers give it, RFC 3339 in whole seconds of UTC, rounded up so it is never early. */
function rfc3339(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Whether `level`, held at `at` by a bucket of `capacity`, is still below it at `now` once refilled. */
function belowCapacity(level: number | null, capacity: number, at: number, now: number): boolean {
  return level !== null && capacity > 0 && levelAt(level, capacity, at, now) < capacity;
}

interface Buckets {
  requests: TokenBucket | null;
  tokens: TokenBucket | null;
  /**
   * Admitted here since the exchange last took it (requests, tokens), and the reservations
   * admitted and not settled yet (unsettled). One object for the life of the bucket's name,
   * kept when a change of limits makes new buckets, so a request admitted before the change
   * still settles into it.
   */
  admitted: { requests: number; tokens: number; unsettled: number };
}

/**
 * Requests-per-minute and tokens-per-minute limits, in memory. Counted per account, except for
 * a key with its own override, which has buckets of its own. A token limit reserves the
 * request's estimate (prompt + max_tokens) and settles to actual usage. Instances sharing a
 * database charge each other's admissions through RateExchange, off the request path: here
 * each admission only adds to its bucket's counts.
 */
export class RateLimiter {
  #buckets = new Map<string, Buckets>();

  constructor(private readonly now: () => number) {}

  /** Admits a request estimated at `estimatedTokens`, or throws 429 with Retry-After; both with the rate-limit headers. */
  admit(principal: Principal, limits: Limits, estimatedTokens: number, anthropicNames: AnthropicNames = false): RateGrant {
    const now = this.now();
    const buckets = this.#bucketsOf(principal, limits, now);
    const tokens = Math.min(estimatedTokens, buckets.tokens?.capacity ?? estimatedTokens);
    this.#refuseIfWaiting(buckets, tokens, now, anthropicNames);
    buckets.requests?.tryTake(1, now);
    buckets.tokens?.tryTake(tokens, now);
    const { admitted } = buckets;
    admitted.requests += 1;
    admitted.tokens += tokens;
    admitted.unsettled += 1;
    return {
      headers: this.#headers(buckets, now, anthropicNames),
      settle: (actual) => {
        buckets.tokens?.adjust(tokens - actual, this.now());
        admitted.tokens += actual - tokens;
        admitted.unsettled -= 1;
      },
    };
  }

  /**
   * Throws the 429 `admit` would throw for a request that reserves no tokens, and takes
   * nothing: for an endpoint whose estimate needs costly work first (an upload to spool and
   * probe), so a key already at its request limit is refused before that work.
   */
  refuseIfExhausted(principal: Principal, limits: Limits): void {
    const now = this.now();
    this.#refuseIfWaiting(this.#bucketsOf(principal, limits, now), 0, now, false);
  }

  /** A 429 with Retry-After when the buckets cannot give one request and `tokens` now. */
  #refuseIfWaiting(buckets: Buckets, tokens: number, now: number, anthropicNames: AnthropicNames): void {
    const waitRequests = buckets.requests?.msUntil(1, now) ?? 0;
    // A request that reserves no tokens (a token count) does not wait for a bucket in debt.
    const waitTokens = tokens > 0 ? (buckets.tokens?.msUntil(tokens, now) ?? 0) : 0;
    if (waitRequests === 0 && waitTokens === 0) return;
    const which = waitRequests > 0 ? "requests" : "tokens";
    const wait = Math.max(waitRequests, waitTokens);
    throw new GatewayError(429, `Rate limit reached for ${which} per minute; retry after ${duration(wait)}`, {
      "retry-after": String(Math.max(1, Math.ceil(wait / 1000))),
      ...this.#headers(buckets, now, anthropicNames),
    });
  }

  /** The key's own buckets when it has its own limits, else its account's. */
  #bucketsOf(principal: Principal, limits: Limits, now: number): Buckets {
    const ownBuckets = principal.requestsPerMinute !== null || principal.tokensPerMinute !== null;
    return this.#bucketsFor(ownBuckets ? `key:${principal.tokenId}` : `user:${principal.userId}`, limits, now);
  }

  /**
   * What each bucket with a limit admitted since the last take, with its levels now; with
   * `everyNotFull`, also each bucket not full that admitted nothing (counts of 0), so that its
   * level is published. Every bucket's counts start again from 0 (a bucket without limits is
   * never sent, and its counts go too).
   */
  takeAdmitted(everyNotFull = false): PublishedBucket[] {
    const now = this.now();
    const taken: PublishedBucket[] = [];
    for (const [bucket, buckets] of this.#buckets) {
      const { admitted } = buckets;
      const published = admitted.requests !== 0 || admitted.tokens !== 0 || (everyNotFull && !this.#isFull(buckets, now));
      if (!published) continue;
      if (buckets.requests || buckets.tokens) {
        taken.push({
          bucket,
          requests: admitted.requests,
          tokens: admitted.tokens,
          ...this.#limitsOf(buckets),
          requestsLevel: buckets.requests?.level(now) ?? null,
          tokensLevel: buckets.tokens?.level(now) ?? null,
        });
      }
      admitted.requests = 0;
      admitted.tokens = 0;
    }
    return taken;
  }

  /**
   * Forgets every bucket that is full, has nothing admitted waiting for the exchange and no
   * reservation unsettled: such a bucket is the same as none, and without this every account
   * that ever sent a request would keep its buckets for the life of the process.
   */
  evictFull(): void {
    const now = this.now();
    for (const [bucket, buckets] of this.#buckets) {
      const { admitted } = buckets;
      if (admitted.requests === 0 && admitted.tokens === 0 && admitted.unsettled === 0 && this.#isFull(buckets, now)) this.#buckets.delete(bucket);
    }
  }

  /** How many bucket names are held; for tests of eviction. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Counts `taken` again, to be taken next time: the exchange that took it did not commit. */
  returnAdmitted(taken: readonly BucketUsage[]): void {
    for (const usage of taken) {
      const admitted = this.#buckets.get(usage.bucket)?.admitted;
      if (!admitted) continue;
      admitted.requests += usage.requests;
      admitted.tokens += usage.tokens;
    }
  }

  /**
   * Charges a bucket with what other instances admitted from it: a debit that may put it in
   * debt (a credit, for tokens settled below their reservation, never fills it past capacity).
   * A bucket this instance has not served yet is made at the other instance's limits, so its
   * first request here finds the charge; one it has keeps its own limits.
   */
  chargeShared(usage: BucketUsage): void {
    const now = this.now();
    const buckets = this.#buckets.get(usage.bucket) ?? this.#bucketsFor(usage.bucket, usage, now);
    buckets.requests?.adjust(-usage.requests, now);
    buckets.tokens?.adjust(-usage.tokens, now);
  }

  /**
   * Lowers a bucket to another instance's level for it, refilled since, where that is lower;
   * never raises it. The level includes what that instance admitted, so nothing of it is
   * charged as well. A bucket not held here is made at the level's limits, only when the
   * level is below them.
   */
  lowerShared(levels: BucketLevels): void {
    const now = this.now();
    const { requestsLevel, tokensLevel, at } = levels;
    let buckets = this.#buckets.get(levels.bucket);
    if (!buckets) {
      if (!belowCapacity(requestsLevel, levels.requestsPerMinute, at, now) && !belowCapacity(tokensLevel, levels.tokensPerMinute, at, now)) return;
      buckets = this.#bucketsFor(levels.bucket, levels, now);
    }
    if (requestsLevel !== null) buckets.requests?.lowerTo(requestsLevel, at, now);
    if (tokensLevel !== null) buckets.tokens?.lowerTo(tokensLevel, at, now);
  }

  #isFull(buckets: Buckets, now: number): boolean {
    return (buckets.requests?.isFull(now) ?? true) && (buckets.tokens?.isFull(now) ?? true);
  }

  #limitsOf(buckets: Buckets): Limits {
    return { requestsPerMinute: buckets.requests?.capacity ?? 0, tokensPerMinute: buckets.tokens?.capacity ?? 0 };
  }

  #bucketsFor(id: string, limits: Limits, now: number): Buckets {
    const buckets = this.#buckets.get(id);
    if (buckets && (buckets.requests?.capacity ?? 0) === limits.requestsPerMinute && (buckets.tokens?.capacity ?? 0) === limits.tokensPerMinute) return buckets;
    // A changed limit starts a fresh bucket at the new capacity.
    const fresh: Buckets = {
      requests: limits.requestsPerMinute > 0 ? new TokenBucket(limits.requestsPerMinute, now) : null,
      tokens: limits.tokensPerMinute > 0 ? new TokenBucket(limits.tokensPerMinute, now) : null,
      admitted: buckets?.admitted ?? { requests: 0, tokens: 0, unsettled: 0 },
    };
    this.#buckets.set(id, fresh);
    return fresh;
  }

  #headers(buckets: Buckets, now: number, anthropicNames: AnthropicNames): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, bucket] of [["requests", buckets.requests], ["tokens", buckets.tokens]] as const) {
      if (!bucket) continue;
      const limit = String(bucket.capacity);
      const remaining = String(Math.max(0, Math.floor(bucket.level(now))));
      const untilFull = bucket.msUntilFull(now);
      headers[`x-ratelimit-limit-${name}`] = limit;
      headers[`x-ratelimit-remaining-${name}`] = remaining;
      headers[`x-ratelimit-reset-${name}`] = duration(untilFull);
      if (!anthropicNames) continue;
      headers[`anthropic-ratelimit-${name}-limit`] = limit;
      headers[`anthropic-ratelimit-${name}-remaining`] = remaining;
      headers[`anthropic-ratelimit-${name}-reset`] = rfc3339(now + untilFull);
    }
    return headers;
  }
}
