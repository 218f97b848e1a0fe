/** The level of a bucket of `capacity` that held `level` at `at`, refilled to `now` (never past its capacity). */
export function levelAt(level: number, capacity: number, at: number, now: number): number {
  return Math.min(capacity, level + (Math.max(0, now - at) * capacity) / 60_000);
}

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
    this.#level = levelAt(this.#level, this.capacity, this.#updatedAt, now);
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

  /** Lowers the bucket to `level`, held at `at` and refilled since, when that is lower; never raises it. */
  lowerTo(level: number, at: number, now: number): void {
    this.#refill(now);
    this.#level = Math.min(this.#level, levelAt(level, this.capacity, at, now));
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
