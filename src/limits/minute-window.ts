/**
 * How long a slot of a window is: admissions in one slot are counted together, and age out
 * together. Short, so a unit counts for a minute less at most this much.
 */
export const SLOT_MS = 100;
/** A minute, in slots: a unit counts in the slot it was taken in and until 600 slots after that slot began. */
export const WINDOW_SLOTS = 600;
/** How long after its slot began a unit still counts: a minute. */
export const WINDOW_MS = WINDOW_SLOTS * SLOT_MS;

/**
 * A window's non-empty slots, oldest first, flat: slot, amount, slot, amount, ... (a slot's
 * number is its start in ms / SLOT_MS). Flat, as windows are published and read by the
 * thousand at every exchange, and a pair each would be an allocation each.
 */
export type WindowEntries = readonly number[];

/** The slot that `ms` falls in. */
export const slotOf = (ms: number): number => Math.floor(ms / SLOT_MS);

/** Whether a unit taken at `at` still counts at `now`: its slot began less than a minute before now's. */
export const stillCounts = (at: number, now: number): boolean => slotOf(at) > slotOf(now) - WINDOW_SLOTS;

/**
 * What one limit (requests, or tokens) has used in the last minute: amounts by slot of 100 ms,
 * each dropped a minute after its slot began. A sliding window, not a refilling bucket: a
 * limit of N per minute allows N at once, and then nothing more until they age out, so no span
 * of 59.9 s ever holds more than N (a bucket refilling N a minute would allow up to 2N in a
 * minute), and a caller that waits a minute after its first request finds it aged out.
 *
 * Sparse: only slots that something was taken in are held, oldest first, as admissions come
 * in time order; an account that sends a request now and then holds a few entries, the
 * busiest at most 600.
 */
export class MinuteWindow {
  #slots: number[] = [];
  #amounts: number[] = [];
  /** Index of the oldest entry still held: entries before it have aged out (compacted now and then). */
  #first = 0;
  #sum = 0;

  /** A window holding `entries` (another instance's, as published), as of `now`. */
  static of(entries: WindowEntries, now: number): MinuteWindow {
    const window = new MinuteWindow();
    const oldestCounted = slotOf(now) - WINDOW_SLOTS + 1;
    for (let index = 0; index < entries.length; index += 2) {
      const slot = entries[index]!;
      const amount = entries[index + 1]!;
      if (slot < oldestCounted) continue;
      const latest = window.#slots.at(-1);
      if (latest === undefined || slot > latest) {
        // As published: oldest first, each slot once.
        window.#slots.push(slot);
        window.#amounts.push(amount);
        window.#sum += amount;
      } else {
        window.add(amount, slot * SLOT_MS, now);
      }
    }
    return window;
  }

  /**
   * Adds `amount` (negative to take back part of an earlier one) to the slot of `at`, if it
   * still counts at `now`: a unit already aged out is not counted again, nor taken back. A
   * slot later than now's is counted as now's (see #ageOut). What is taken back comes only
   * from the slot of `at` as it is held, never below nothing: after the clock went back, what
   * was counted in a later slot has moved to an earlier one, and stays counted whole.
   */
  add(amount: number, at: number, now: number): void {
    if (amount === 0) return;
    this.#ageOut(now);
    const current = slotOf(now);
    const slot = amount < 0 ? slotOf(at) : Math.min(slotOf(at), current);
    if (slot <= current - WINDOW_SLOTS) return;
    let index = this.#slots.length - 1;
    // Nearly always the newest slot, or a new one after it; a settlement finds its older slot near the end.
    while (index >= this.#first && this.#slots[index]! > slot) index--;
    if (index >= this.#first && this.#slots[index] === slot) {
      const added = Math.max(amount, -this.#amounts[index]!);
      this.#amounts[index]! += added;
      this.#sum += added;
    } else if (amount > 0) {
      this.#insert(index + 1, slot, amount);
      this.#sum += amount;
    }
  }

  /** The amount used in the window at `now`. */
  used(now: number): number {
    this.#ageOut(now);
    return this.#sum;
  }

  /** The non-empty slots at `now`, oldest first. */
  entries(now: number): number[] {
    this.#ageOut(now);
    const entries: number[] = [];
    for (let index = this.#first; index < this.#slots.length; index++) {
      if (this.#amounts[index] !== 0) entries.push(this.#slots[index]!, this.#amounts[index]!);
    }
    return entries;
  }

  /** The latest slot with an amount in it at `now`, or null when the window is empty. */
  latestUsedSlot(now: number): number | null {
    this.#ageOut(now);
    for (let index = this.#slots.length - 1; index >= this.#first; index--) if (this.#amounts[index] !== 0) return this.#slots[index]!;
    return null;
  }

  /**
   * Drops the entries aged out at `now`, and counts those of slots later than now's as now's: a
   * clock that steps back (or another machine's clock that runs ahead) keeps them counted for a
   * minute from now, not for the minute after their own slot, which could be hours away.
   */
  #ageOut(now: number): void {
    const current = slotOf(now);
    if (this.#slots.length > this.#first && this.#slots[this.#slots.length - 1]! > current) this.#countLaterAsNow(current);
    const oldestCounted = current - WINDOW_SLOTS + 1;
    while (this.#first < this.#slots.length && this.#slots[this.#first]! < oldestCounted) {
      this.#sum -= this.#amounts[this.#first]!;
      this.#first++;
    }
    if (this.#first === this.#slots.length) {
      this.#slots.length = 0;
      this.#amounts.length = 0;
      this.#first = 0;
      this.#sum = 0;
    } else if (this.#first > 64 && this.#first * 2 > this.#slots.length) {
      this.#slots.splice(0, this.#first);
      this.#amounts.splice(0, this.#first);
      this.#first = 0;
    }
  }

  /**
   * Puts a new entry at `index`: pushed when it is the newest, as nearly every one is (a splice
   * makes an array of what it removes, each time).
   */
  #insert(index: number, slot: number, amount: number): void {
    if (index === this.#slots.length) {
      this.#slots.push(slot);
      this.#amounts.push(amount);
    } else {
      this.#slots.splice(index, 0, slot);
      this.#amounts.splice(index, 0, amount);
    }
  }

  /** Moves what the slots after `current` hold into `current`, the newest entry. */
  #countLaterAsNow(current: number): void {
    let later = 0;
    let index = this.#slots.length - 1;
    for (; index >= this.#first && this.#slots[index]! > current; index--) later += this.#amounts[index]!;
    this.#slots.length = index + 1;
    this.#amounts.length = index + 1;
    if (index >= this.#first && this.#slots[index] === current) this.#amounts[index]! += later;
    else this.#insert(index + 1, current, later);
  }
}

/** When a unit of `slot` stops counting. */
const agesOutAt = (slot: number): number => (slot + WINDOW_SLOTS) * SLOT_MS;

/**
 * Milliseconds from `now` until what `windows` use together is at most `target` (0 when it
 * already is): the slots age out oldest first, so the wait ends when the last slot that must
 * go has gone.
 */
export function msUntilUsedAtMost(windows: readonly MinuteWindow[], target: number, now: number): number {
  const bySlot = new Map<number, number>();
  let used = 0;
  for (const window of windows) {
    const entries = window.entries(now);
    for (let index = 0; index < entries.length; index += 2) {
      const slot = entries[index]!;
      const amount = entries[index + 1]!;
      bySlot.set(slot, (bySlot.get(slot) ?? 0) + amount);
      used += amount;
    }
  }
  if (used <= target) return 0;
  for (const slot of [...bySlot.keys()].sort((a, b) => a - b)) {
    used -= bySlot.get(slot)!;
    if (used <= target) return Math.max(0, agesOutAt(slot) - now);
  }
  // Not reached: once every slot has aged out, nothing is used.
  return WINDOW_MS;
}

/** Milliseconds from `now` until `windows` use nothing: until their latest used slot ages out. */
export function msUntilEmpty(windows: readonly MinuteWindow[], now: number): number {
  let latest: number | null = null;
  for (const window of windows) {
    const slot = window.latestUsedSlot(now);
    if (slot !== null && (latest === null || slot > latest)) latest = slot;
  }
  return latest === null ? 0 : Math.max(0, agesOutAt(latest) - now);
}
