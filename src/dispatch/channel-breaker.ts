/** Longest cooldown after repeated failed probes. */
const MAX_COOLDOWN_MS = 10 * 60_000;

interface ChannelHealth {
  consecutiveFailures: number;
  coolUntil: number;
  cooldownMs: number;
  /** A probe is in flight: other requests keep skipping the channel until it reports. */
  probing: boolean;
}

/**
 * Takes a channel that keeps failing out of rotation for a while ("cooling"), then lets one
 * request through as a probe: success brings it back, failure cools it for twice as long.
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
    if (!health || health.coolUntil === 0) return true;
    if (health.probing || this.now() < health.coolUntil) return false;
    health.probing = true;
    return true;
  }

  /** Whether the channel is cooling now (for the admin view). */
  isCooling(channelId: string): boolean {
    const health = this.#health.get(channelId);
    return health !== undefined && health.coolUntil !== 0;
  }

  /** The channel answered: it is healthy again. */
  succeeded(channelId: string): void {
    this.#health.delete(channelId);
  }

  /** The channel failed in a way that counts against it (connect, timeout, 429, 5xx). */
  failed(channelId: string): void {
    const health = this.#health.get(channelId) ?? { consecutiveFailures: 0, coolUntil: 0, cooldownMs: this.cooldownMs, probing: false };
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

  /** Releases a claimed probe that ended without a verdict (e.g. the caller's own 400). */
  released(channelId: string): void {
    const health = this.#health.get(channelId);
    if (health) health.probing = false;
  }
}
