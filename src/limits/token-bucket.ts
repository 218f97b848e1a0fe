/**
 * A bucket that holds up to `capacity` units and refills continuously, `capacity` per
 * minute: a limit of N per minute allows a burst of N, then one every 60/N seconds.
 */
export class TokenBucket {
  #level: number;
  #updatedAt: number;

  constructor(
    readonly capacity: number,
    now: number,
  ) {
    this.#level = capacity;
    this.#updatedAt = now;
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#level = Math.min(this.capacity, this.#level + (elapsed * this.capacity) / 60_000);
    this.#updatedAt = now;
  }

  /** Units available now (may be negative after usage above a reservation). */
  level(now: number): number {
    this.#refill(now);
    return this.#level;
  }

  /** Takes `units` if available; false leaves the bucket unchanged. */
  tryTake(units: number, now: number): boolean {
    this.#refill(now);
    if (this.#level < units) return false;
    this.#level -= units;
    return true;
  }

  /** Adjusts by `units` (positive returns unused reservation, negative charges excess). */
  adjust(units: number, now: number): void {
    this.#refill(now);
    this.#level = Math.min(this.capacity, this.#level + units);
  }

  /** Whether the bucket holds its capacity: it is then the same as a bucket just made. */
  isFull(now: number): boolean {
    return this.level(now) >= this.capacity;
  }

  /** Milliseconds until `units` are available (0 when they are). */
  msUntil(units: number, now: number): number {
    const missing = Math.min(units, this.capacity) - this.level(now);
    return missing <= 0 ? 0 : Math.ceil((missing * 60_000) / this.capacity);
  }

  /** Milliseconds until the bucket is full again. */
  msUntilFull(now: number): number {
    return this.msUntil(this.capacity, now);
  }
}
