import { silentLogger, type Logger } from "../lib/logger.ts";

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

/**
 * A request's leave to use a channel, from `admit`: NOT_A_PROBE for an ordinary use, else the
 * number of the probe it carries. Handed back with the outcome, so only the probe's own
 * outcome ends its probe: requests let through before the cool-down began may still be in
 * flight (a non-streamed answer can take minutes), and their outcomes must neither open a
 * second probe nor count as the probe's verdict.
 */
export type Ticket = number;
export const NOT_A_PROBE: Ticket = 0;

interface ChannelHealth {
  consecutiveFailures: number;
  coolUntil: number;
  cooldownMs: number;
  /** The ticket of the probe in flight, or NOT_A_PROBE: other requests keep skipping the channel until it reports. */
  probe: Ticket;
  /** The upstream answered 429: skip the channel until then (its Retry-After), without counting a failure. */
  throttledUntil: number;
}

/**
 * Takes a channel that keeps failing out of rotation for a while ("cooling"), then lets one
 * request through as a probe: success brings it back, failure cools it for twice as long.
 * A 429 is not ill health: the channel is only skipped for as long as its Retry-After asks,
 * so one rate-limited burst does not take a healthy upstream out for a whole cooldown.
 * In memory per instance; an admin's `disabled` is separate and never undone here, and an
 * admin's edit of a channel ends its cool-down on every instance (see `forget`).
 */
export class ChannelBreaker {
  #health = new Map<string, ChannelHealth>();
  #lastProbe: Ticket = NOT_A_PROBE;
  /** The latest time read, to see the wall clock step back. */
  #lastNow = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly failuresToCool: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
    /** Where a channel's cooling and its return are told, so an operator sees a failing upstream. */
    private readonly log: Logger = silentLogger,
  ) {}

  /** A ticket when a request may use the channel now (the probe's, when one is due), else null. */
  admit(channelId: string): Ticket | null {
    const health = this.#health.get(channelId);
    if (!health) return NOT_A_PROBE;
    const now = this.#now();
    if (now < health.throttledUntil) return null;
    if (health.coolUntil === 0) return NOT_A_PROBE;
    if (health.probe !== NOT_A_PROBE || now < health.coolUntil) return null;
    health.probe = ++this.#lastProbe;
    return health.probe;
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
    const now = this.#now();
    if (now < health.throttledUntil) return { reason: "throttled", remainingMs: health.throttledUntil - now };
    if (health.coolUntil !== 0 && (health.probe !== NOT_A_PROBE || now < health.coolUntil)) return { reason: "cooling", remainingMs: Math.max(health.coolUntil - now, 0) };
    return null;
  }

  /** The channel answered: it is healthy again. */
  succeeded(channelId: string): void {
    const health = this.#health.get(channelId);
    if (health === undefined) return;
    if (health.coolUntil) this.log.info("channel back from cooling", { channel_id: channelId });
    this.#health.delete(channelId);
  }

  /**
   * An admin changed or removed the channel: whatever it did before (a refused key, a wrong
   * base URL) is no guide to what it does now, and an admin who sets it `active` means it to
   * serve at once. Its cool-down and 429 pause end; if it still fails, it cools again.
   */
  forget(channelId: string): void {
    this.#health.delete(channelId);
  }

  /**
   * The channel failed in a way that counts against it (connect, timeout, 5xx, its key or model
   * refused). A failed probe cools it for twice as long; a request let through before the
   * cool-down began tells nothing new once it is cooling.
   */
  failed(channelId: string, ticket: Ticket, why: string): void {
    const health = this.#healthOf(channelId);
    if (this.#isProbe(health, ticket)) {
      health.cooldownMs = Math.min(health.cooldownMs * 2, MAX_COOLDOWN_MS);
      health.probe = NOT_A_PROBE;
      health.coolUntil = this.#now() + health.cooldownMs;
      this.log.warn("channel cooling: its probe failed", { channel_id: channelId, cooldown_ms: health.cooldownMs, error: why });
    } else if (health.coolUntil === 0 && ++health.consecutiveFailures >= this.failuresToCool) {
      health.coolUntil = this.#now() + health.cooldownMs;
      this.log.warn("channel cooling", { channel_id: channelId, failures: health.consecutiveFailures, cooldown_ms: health.cooldownMs, error: why });
    }
    this.#health.set(channelId, health);
  }

  /**
   * The upstream answered 429: skip the channel for `retryAfterSeconds` (1 s when it gave none,
   * 60 s at most). A probe it was serving ends without a verdict.
   */
  throttled(channelId: string, ticket: Ticket, retryAfterSeconds: number | undefined): void {
    const health = this.#healthOf(channelId);
    const pauseMs = retryAfterSeconds === undefined ? DEFAULT_THROTTLE_MS : Math.min(retryAfterSeconds * 1000, MAX_THROTTLE_MS);
    health.throttledUntil = Math.max(health.throttledUntil, this.#now() + pauseMs);
    if (this.#isProbe(health, ticket)) health.probe = NOT_A_PROBE;
    this.#health.set(channelId, health);
  }

  /** Releases a claimed probe that ended without a verdict (e.g. the caller's own 400); an ordinary use has nothing to release. */
  released(channelId: string, ticket: Ticket): void {
    const health = this.#health.get(channelId);
    if (health && this.#isProbe(health, ticket)) health.probe = NOT_A_PROBE;
  }

  /**
   * The time now. Pauses end at wall-clock times: when the clock steps back (an NTP
   * correction, a VM resumed), each end moves back by as much, so a pause lasts as long as it
   * was meant to; an hour's step back used to keep a cooling channel out (and, alone, its
   * model answering 503) for an hour more. A step forward ends pauses early, and a probe decides.
   */
  #now(): number {
    const now = this.now();
    const back = this.#lastNow - now;
    this.#lastNow = now;
    if (back > 0) {
      for (const health of this.#health.values()) {
        if (health.coolUntil !== 0) health.coolUntil -= back;
        health.throttledUntil -= back;
      }
    }
    return now;
  }

  #healthOf(channelId: string): ChannelHealth {
    return this.#health.get(channelId) ?? { consecutiveFailures: 0, coolUntil: 0, cooldownMs: this.cooldownMs, probe: NOT_A_PROBE, throttledUntil: 0 };
  }

  /** Whether `ticket` carries the channel's probe in flight (not one a success since then has ended). */
  #isProbe(health: ChannelHealth, ticket: Ticket): boolean {
    return ticket !== NOT_A_PROBE && health.probe === ticket;
  }
}
