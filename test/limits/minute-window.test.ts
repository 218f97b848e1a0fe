import { expect, test } from "bun:test";
import { MinuteWindow, msUntilEmpty, msUntilUsedAtMost, SLOT_MS, WINDOW_MS } from "../../src/limits/minute-window.ts";

/** The sliding minute every rate limit counts in (src/limits/minute-window.ts). */

const T0 = Date.parse("2026-11-21T10:00:00Z");
const SLOT = T0 / SLOT_MS;

test("what is taken counts until a minute after its 100 ms slot began, and then ages out", () => {
  const window = new MinuteWindow();
  window.add(3, T0 + 99, T0 + 99);
  window.add(2, T0 + 30_000, T0 + 30_000);
  expect(window.used(T0 + 30_000)).toBe(5);
  expect(window.used(T0 + WINDOW_MS - 1)).toBe(5);
  expect(window.used(T0 + WINDOW_MS)).toBe(2);
  expect(window.used(T0 + 30_000 + WINDOW_MS)).toBe(0);
});

test("no span of 59.9 s ever holds more than the limit, however requests are spread, and a minute after a request its unit is back", () => {
  const limit = 10;
  const window = new MinuteWindow();
  const admitted: number[] = [];
  // An attempt every 37 ms for three minutes, each admitted when the window has room.
  for (let now = T0 + 13; now < T0 + 180_000; now += 37) {
    if (window.used(now) + 1 > limit) continue;
    window.add(1, now, now);
    admitted.push(now);
  }
  for (const start of admitted) expect(admitted.filter((at) => at >= start && at < start + WINDOW_MS - SLOT_MS).length).toBeLessThanOrEqual(limit);
  // A refilling bucket of 10 a minute would have let through 10 at once and one every 6 s after.
  expect(admitted.length).toBe(30);
  // Each batch after the first starts within a minute and one slot of the one before.
  expect(admitted[10]! - admitted[0]!).toBeGreaterThanOrEqual(WINDOW_MS - SLOT_MS);
  expect(admitted[10]! - admitted[0]!).toBeLessThanOrEqual(WINDOW_MS + 37);
});

test("a later part of an amount goes back into the slot it was taken in, and is not taken back once that slot aged out", () => {
  const window = new MinuteWindow();
  window.add(100, T0, T0);
  window.add(1, T0 + 500, T0 + 500);
  window.add(-70, T0, T0 + 5_000);
  expect(window.entries(T0 + 5_000)).toEqual([SLOT, 30, SLOT + 5, 1]);
  window.add(-30, T0, T0 + WINDOW_MS);
  expect(window.used(T0 + WINDOW_MS)).toBe(1);
  expect(window.entries(T0 + WINDOW_MS)).toEqual([SLOT + 5, 1]);
});

test("a window made from published entries counts those still in the minute, whatever their order", () => {
  const window = MinuteWindow.of([SLOT - 700, 5, SLOT, 1, SLOT - 300, 2], T0);
  expect(window.used(T0)).toBe(3);
  expect(window.entries(T0)).toEqual([SLOT - 300, 2, SLOT, 1]);
  expect(window.latestUsedSlot(T0)).toBe(SLOT);
});

test("a clock that steps back keeps counting what was taken after it, as if taken now: for a minute, not until a minute after its own slot", () => {
  const window = new MinuteWindow();
  window.add(4, T0 + 3_600_000, T0 + 3_600_000);
  // The clock steps back an hour.
  expect(window.used(T0)).toBe(4);
  window.add(1, T0 + 100, T0 + 100);
  expect(window.entries(T0 + 100)).toEqual([SLOT, 4, SLOT + 1, 1]);
  expect(msUntilEmpty([window], T0 + 100)).toBe(WINDOW_MS);
  expect(window.used(T0 + WINDOW_MS)).toBe(1);
});

test("after the clock went back, taking back finds nothing in the later slot a reservation was moved out of, and never takes a slot below nothing", () => {
  const window = new MinuteWindow();
  window.add(100, T0 + 3_600_000, T0 + 3_600_000);
  expect(window.used(T0)).toBe(100);
  // Its settlement names the slot it was taken in, an hour ahead: the reservation counts whole.
  window.add(-70, T0 + 3_600_000, T0 + 1_000);
  expect(window.used(T0 + 1_000)).toBe(100);
  window.add(-500, T0, T0 + 2_000);
  expect(window.used(T0 + 2_000)).toBe(0);
  expect(window.entries(T0 + 2_000)).toEqual([]);
});

test("a busy window holds at most a minute of slots however long it runs", () => {
  const window = new MinuteWindow();
  for (let now = T0; now < T0 + 5 * WINDOW_MS; now += 10) window.add(1, now, now);
  const now = T0 + 5 * WINDOW_MS;
  // Flat: two numbers a slot.
  expect(window.entries(now).length).toBe(2 * (WINDOW_MS / SLOT_MS - 1));
  expect(window.used(now)).toBe(5_990);
});

test("the wait until enough has aged out, over several windows together, and until all of it has", () => {
  const own = new MinuteWindow();
  const other = new MinuteWindow();
  own.add(4, T0, T0);
  other.add(3, T0 + 10_000, T0 + 10_000);
  own.add(3, T0 + 20_000, T0 + 20_000);
  const now = T0 + 30_000;
  expect(msUntilUsedAtMost([own, other], 10, now)).toBe(0);
  // 10 used: for 9 at most the first slot must age out (at T0 + 60 s).
  expect(msUntilUsedAtMost([own, other], 9, now)).toBe(30_000);
  expect(msUntilUsedAtMost([own, other], 4, now)).toBe(40_000);
  expect(msUntilEmpty([own, other], now)).toBe(50_000);
  expect(msUntilEmpty([new MinuteWindow()], now)).toBe(0);
});
