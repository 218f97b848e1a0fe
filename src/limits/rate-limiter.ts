import type { Principal } from "../auth/key-cache.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Settings } from "../settings/settings-schema.ts";
import { MinuteWindow, msUntilEmpty, msUntilUsedAtMost, stillCounts, type WindowEntries } from "./minute-window.ts";

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
 * token limit counts input and output together, as Anthropic's tokens-* trio does; Anthropic's
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

/**
 * One bucket's own windows as an instance publishes them for the others (RateExchange): what it
 * admitted itself in the last minute, by slot, never what it learnt from the others.
 */
export interface PublishedWindows {
  /** `user:<id>`, or `key:<id>` for a key with its own limits. */
  bucket: string;
  requests: WindowEntries;
  /** Net of settlement: a reservation settled to actual usage counts the actual. */
  tokens: WindowEntries;
}

/** A time as Anthropic's reset headers give it, RFC 3339 in whole seconds of UTC, rounded up so it is never early. */
function rfc3339(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}


/** What one instance has used of a bucket in the last minute, by limit. */
interface Windows {
  requests: MinuteWindow;
  tokens: MinuteWindow;
}

type Kind = keyof Windows;

interface Bucket {
  /** The limits of the last request admitted; 0 (none) for a bucket known only from other instances. */
  limits: Limits;
  /** What this instance admitted. */
  own: Windows;
  /** What each other instance admitted, by instance id, as last read from its row. */
  peers: Map<string, Windows>;
  /** Whether `own` changed since the exchange last took it. */
  changed: boolean;
  /** Reservations admitted and not settled yet: they settle into this bucket, which is held until then. */
  unsettled: number;
}

/** The grant of a request that no limit applies to: nothing to count, no headers. */
const UNLIMITED: RateGrant = { headers: {}, settle: () => {} };

/**
 * Requests-per-minute and tokens-per-minute limits, in memory, over a sliding minute (see
 * MinuteWindow). Counted per account, except for a key with its own override, which has a
 * bucket of its own. A token limit reserves the request's estimate (prompt + max_tokens) and
 * settles to actual usage. Instances sharing a database publish what they admitted, and read
 * what the others did, through RateExchange, off the request path: a request is checked
 * against this instance's own windows and the others' as last read.
 */
export class RateLimiter {
  #buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number) {}

  /** Admits a request estimated at `estimatedTokens`, or throws 429 with Retry-After; both with the rate-limit headers. */
  admit(principal: Principal, limits: Limits, estimatedTokens: number, anthropicNames: AnthropicNames = false): RateGrant {
    if (limits.requestsPerMinute === 0 && limits.tokensPerMinute === 0) return UNLIMITED;
    const now = this.now();
    const bucket = this.#bucketOf(principal, limits);
    // A reservation above the limit would wait forever: it reserves the whole limit instead.
    const tokens = limits.tokensPerMinute > 0 ? Math.min(estimatedTokens, limits.tokensPerMinute) : estimatedTokens;
    this.#refuseIfWaiting(bucket, tokens, now, anthropicNames);
    bucket.own.requests.add(1, now, now);
    bucket.own.tokens.add(tokens, now, now);
    bucket.changed = true;
    bucket.unsettled += 1;
    return {
      headers: this.#headers(bucket, now, anthropicNames),
      settle: (actual) => {
        const settledAt = this.now();
        const excess = actual - tokens;
        // Into the slot the reservation was counted in, so both age out together; usage above
        // the reservation of a request that outlived that slot (a stream longer than a minute)
        // counts from now instead, as it was used within the last minute.
        const at = excess > 0 && !stillCounts(now, settledAt) ? settledAt : now;
        bucket.own.tokens.add(excess, at, settledAt);
        bucket.changed = true;
        bucket.unsettled -= 1;
      },
    };
  }

  /**
   * Throws the 429 `admit` would throw for a request that reserves no tokens, and takes
   * nothing: for an endpoint whose estimate needs costly work first (an upload to spool and
   * probe), so a key already at its request limit is refused before that work.
   */
  refuseIfExhausted(principal: Principal, limits: Limits): void {
    if (limits.requestsPerMinute === 0 && limits.tokensPerMinute === 0) return;
    this.#refuseIfWaiting(this.#bucketOf(principal, limits), 0, this.now(), false);
  }

  /** A 429 with Retry-After when the bucket cannot give one request and `tokens` now. */
  #refuseIfWaiting(bucket: Bucket, tokens: number, now: number, anthropicNames: AnthropicNames): void {
    const { requestsPerMinute, tokensPerMinute } = bucket.limits;
    const waitRequests = requestsPerMinute > 0 ? this.#msUntilUsedAtMost(bucket, "requests", requestsPerMinute - 1, now) : 0;
    // A request that reserves no tokens (a token count) does not wait for tokens used past the limit.
    const waitTokens = tokens > 0 && tokensPerMinute > 0 ? this.#msUntilUsedAtMost(bucket, "tokens", tokensPerMinute - tokens, now) : 0;
    if (waitRequests === 0 && waitTokens === 0) return;
    const which = waitRequests > 0 ? "requests" : "tokens";
    const wait = Math.max(waitRequests, waitTokens);
    throw new GatewayError(429, `Rate limit reached for ${which} per minute; retry after ${duration(wait)}`, {
      "retry-after": String(Math.max(1, Math.ceil(wait / 1000))),
      ...this.#headers(bucket, now, anthropicNames),
    });
  }

  /** The key's own bucket when it has its own limits, else its account's; at `limits` from now on. */
  #bucketOf(principal: Principal, limits: Limits): Bucket {
    const ownBucket = principal.requestsPerMinute !== null || principal.tokensPerMinute !== null;
    const bucket = this.#bucketNamed(ownBucket ? `key:${principal.tokenId}` : `user:${principal.userId}`);
    // A changed limit applies at once to what the window holds.
    bucket.limits = limits;
    return bucket;
  }

  #bucketNamed(name: string): Bucket {
    let bucket = this.#buckets.get(name);
    if (!bucket) {
      bucket = { limits: { requestsPerMinute: 0, tokensPerMinute: 0 }, own: emptyWindows(), peers: new Map(), changed: false, unsettled: 0 };
      this.#buckets.set(name, bucket);
    }
    return bucket;
  }

  /**
   * The own windows of every bucket whose windows changed since the last take, to publish: a
   * published window is the whole of what this instance admitted from the bucket in the last
   * minute, so a bucket that did not change needs no new row.
   */
  takeChanged(): PublishedWindows[] {
    const now = this.now();
    const taken: PublishedWindows[] = [];
    for (const [name, bucket] of this.#buckets) {
      if (!bucket.changed) continue;
      bucket.changed = false;
      taken.push({ bucket: name, requests: bucket.own.requests.entries(now), tokens: bucket.own.tokens.entries(now) });
    }
    return taken;
  }

  /** Marks `taken` as changed again: the exchange that took it did not commit. */
  returnChanged(taken: readonly PublishedWindows[]): void {
    for (const { bucket } of taken) {
      const held = this.#buckets.get(bucket);
      if (held) held.changed = true;
    }
  }

  /**
   * Takes another instance's windows of a bucket, as published (replacing what it published
   * before): they count against this instance's limits until they age out. A bucket not held
   * here is made only when they still hold something.
   */
  setPeerWindows(instanceId: string, published: PublishedWindows): void {
    const now = this.now();
    const windows = { requests: MinuteWindow.of(published.requests, now), tokens: MinuteWindow.of(published.tokens, now) };
    if (isEmpty(windows, now)) {
      this.#buckets.get(published.bucket)?.peers.delete(instanceId);
      return;
    }
    this.#bucketNamed(published.bucket).peers.set(instanceId, windows);
  }

  /**
   * Forgets the windows that hold nothing any more, and every bucket left with nothing (nothing
   * used here or elsewhere, nothing waiting for the exchange, no reservation unsettled): such a
   * bucket is the same as none, and without this every account that ever sent a request would
   * keep one for the life of the process.
   */
  evictIdle(): void {
    const now = this.now();
    for (const [name, bucket] of this.#buckets) {
      for (const [instance, windows] of bucket.peers) if (isEmpty(windows, now)) bucket.peers.delete(instance);
      if (!bucket.changed && bucket.unsettled === 0 && bucket.peers.size === 0 && isEmpty(bucket.own, now)) this.#buckets.delete(name);
    }
  }

  /** How many buckets are held; for tests of eviction. */
  get size(): number {
    return this.#buckets.size;
  }

  /** What this instance and the others use of the bucket's `kind` at `now`. */
  #used(bucket: Bucket, kind: Kind, now: number): number {
    let used = bucket.own[kind].used(now);
    for (const windows of bucket.peers.values()) used += windows[kind].used(now);
    return used;
  }

  #windows(bucket: Bucket, kind: Kind): MinuteWindow[] {
    const windows = [bucket.own[kind]];
    for (const peer of bucket.peers.values()) windows.push(peer[kind]);
    return windows;
  }

  #msUntilUsedAtMost(bucket: Bucket, kind: Kind, target: number, now: number): number {
    return this.#used(bucket, kind, now) <= target ? 0 : msUntilUsedAtMost(this.#windows(bucket, kind), target, now);
  }

  #headers(bucket: Bucket, now: number, anthropicNames: AnthropicNames): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const kind of ["requests", "tokens"] as const) {
      const capacity = kind === "requests" ? bucket.limits.requestsPerMinute : bucket.limits.tokensPerMinute;
      if (capacity === 0) continue;
      const limit = String(capacity);
      const remaining = String(Math.max(0, Math.floor(capacity - this.#used(bucket, kind, now))));
      // OpenAI's reset: until the limit is back to its initial state, all of it free.
      const untilEmpty = msUntilEmpty(this.#windows(bucket, kind), now);
      headers[`x-ratelimit-limit-${kind}`] = limit;
      headers[`x-ratelimit-remaining-${kind}`] = remaining;
      headers[`x-ratelimit-reset-${kind}`] = duration(untilEmpty);
      if (!anthropicNames) continue;
      headers[`anthropic-ratelimit-${kind}-limit`] = limit;
      headers[`anthropic-ratelimit-${kind}-remaining`] = remaining;
      headers[`anthropic-ratelimit-${kind}-reset`] = rfc3339(now + untilEmpty);
    }
    return headers;
  }
}

function emptyWindows(): Windows {
  return { requests: new MinuteWindow(), tokens: new MinuteWindow() };
}

function isEmpty(windows: Windows, now: number): boolean {
  return windows.requests.latestUsedSlot(now) === null && windows.tokens.latestUsedSlot(now) === null;
}
