/** Longest cooldown after repeated failed probes. */
const MAX_COOLDOWN_MS = 10 * 60_000;
/** How long a 429 without Retry-After pauses a channel, and the longest pause a Retry-After may ask for. */
const DEFAULT_THROTTLE_MS = 1_000;
const MAX_THROTTLE_MS = 60_000;

/** Why a channel is skipped, and how long until it may be used again. */
export interface ChannelPause {
  reason: "throttled" | "cooling";
  /** 0 for a cooling channel whose probe is still in flight. */
  remainingMs: number;
}

interface ChannelHealth {
  consecutiveFailures: number;
  coolUntil: number;
  cooldownMs: number;
  /** A probe is in flight: other requests keep skipping the channel until it reports. */
  probing: boolean;
  /** The upstream answered 429: skip the channel until then (its Retry-After), without counting a failure. */
  throttledUntil: number;
}

/**
 * Takes a channel that keeps failing out of rotation for a while ("cooling"), then lets one
 * request through as a probe: success brings it back, failure cools it for twice as long.
 * A 429 is not ill health: the channel is only skipped for as long as its Retry-After asks,
 * so one rate-limited burst does not take a healthy upstream out for a whole cooldown.
 * In memory per instance; an admin's `disabled` is separate and never undone here.
 */
export class ChannelBreaker {
  #health = new Map<string, ChannelHealth>();

  constructor(
    private readonly failuresToCool: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
  ) {}

  /** Whether a request may use the channel now; claims the probe when one is due. */
  allow(channelId: string): boolean {
    const health = this.#health.get(channelId);
    if (!health) return true;
    if (this.now() < health.throttledUntil) return false;
    if (health.coolUntil === 0) return true;
    if (health.probing || this.now() < health.coolUntil) return false;
    health.probing = true;
    return true;
  }

  /** Whether the channel is cooling now (for the admin view). */
  isCooling(channelId: string): boolean {
    const health = this.#health.get(channelId);
    return health !== undefined && health.coolUntil !== 0;
  }

  /** Why `allow` refuses the channel now and until when; null when it is usable. */
  pauseOf(channelId: string): ChannelPause | null {
    const health = this.#health.get(channelId);
    if (!health) return null;
    const now = this.now();
    if (now < health.throttledUntil) return { reason: "throttled", remainingMs: health.throttledUntil - now };
    if (health.coolUntil !== 0 && (health.probing || now < health.coolUntil)) return { reason: "cooling", remainingMs: Math.max(health.coolUntil - now, 0) };
    return null;
  }

  /** The channel answered: it is healthy again. */
  succeeded(channelId: string): void {
    this.#health.delete(channelId);
  }

  /** The channel failed in a way that counts against it (connect, timeout, 5xx, its key or model refused). */
  failed(channelId: string): void {
    const health = this.#healthOf(channelId);
    health.consecutiveFailures++;
    if (health.probing) {
      health.cooldownMs = Math.min(health.cooldownMs * 2, MAX_COOLDOWN_MS);
      health.probing = false;
      health.coolUntil = this.now() + health.cooldownMs;
    } else if (health.consecutiveFailures >= this.failuresToCool) {
      health.coolUntil = this.now() + health.cooldownMs;
    }
    this.#health.set(channelId, health);
  }

  /**
   * The upstream answered 429: skip the channel for `retryAfterSeconds` (1 s when it gave none,
   * 60 s at most). A probe it was serving ends without a verdict.
   */
  throttled(channelId: string, retryAfterSeconds: number | undefined): void {
    const health = this.#healthOf(channelId);
    const pauseMs = retryAfterSeconds === undefined ? DEFAULT_THROTTLE_MS : Math.min(retryAfterSeconds * 1000, MAX_THROTTLE_MS);
    health.throttledUntil = Math.max(health.throttledUntil, this.now() + pauseMs);
    health.probing = false;
    this.#health.set(channelId, health);
  }

  #healthOf(channelId: string): ChannelHealth {
    return this.#health.get(channelId) ?? { consecutiveFailures: 0, coolUntil: 0, cooldownMs: this.cooldownMs, probing: false, throttledUntil: 0 };
  }

  /** Releases a claimed probe that ended without a verdict (e.g. the caller's own 400). */
  released(channelId: string): void {
    const health = this.#health.get(channelId);
    if (health) health.probing = false;
  }
}
