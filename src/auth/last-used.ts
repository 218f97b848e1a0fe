/**
 * Remembers when each key was last used, so the hot path does not write per request; the
 * usage writer persists the pending times in its next batch.
 */
export class LastUsedTracker {
  #pending = new Map<string, number>();
  #latest = new Map<string, number>();

  /** Notes a use of a token at `time`. */
  touch(tokenId: string, time: number): void {
    this.#pending.set(tokenId, time);
    this.#latest.set(tokenId, time);
  }

  /** The newest known use, including ones not yet written. */
  latest(tokenId: string): number | undefined {
    return this.#latest.get(tokenId);
  }

  /** Takes the times not yet written, leaving none pending. */
  drain(): Map<string, number> {
    const pending = this.#pending;
    this.#pending = new Map();
    return pending;
  }
}
