import { describe, expect, test } from "bun:test";
import { IdleReclaimer } from "../../src/lib/idle-reclaimer.ts";

/** An IdleReclaimer that drops compiled code on the 4th quiet tick, its releases logged. */
function logged(): { reclaimer: IdleReclaimer; log: string[] } {
  const log: string[] = [];
  return { reclaimer: new IdleReclaimer({ collect: () => log.push("collect"), shrink: () => log.push("shrink") }, 4), log };
}

/** Runs `count` ticks and returns what each released. */
function ticks(reclaimer: IdleReclaimer, count: number): ("collect" | "shrink" | null)[] {
  return Array.from({ length: count }, () => reclaimer.tick());
}

describe("IdleReclaimer", () => {
  test("a gateway that never served a request never releases", () => {
    const { reclaimer, log } = logged();
    expect(ticks(reclaimer, 10)).toEqual(Array(10).fill(null));
    expect(log).toEqual([]);
  });

  test("after traffic: a collection on the first quiet tick, compiled code dropped on the 4th, then nothing", () => {
    const { reclaimer, log } = logged();
    reclaimer.noteRequest();
    reclaimer.noteRequest();
    expect(reclaimer.tick()).toBeNull(); // requests started during this tick
    expect(ticks(reclaimer, 8)).toEqual(["collect", null, null, "shrink", null, null, null, null]);
    expect(log).toEqual(["collect", "shrink"]);
  });

  test("nothing is released while every tick sees a request", () => {
    const { reclaimer, log } = logged();
    for (let i = 0; i < 20; i++) {
      reclaimer.noteRequest();
      expect(reclaimer.tick()).toBeNull();
    }
    expect(log).toEqual([]);
  });

  test("a request during the quiet restarts the count: short pauses only collect", () => {
    const { reclaimer, log } = logged();
    for (let burst = 0; burst < 3; burst++) {
      reclaimer.noteRequest();
      reclaimer.tick();
      expect(ticks(reclaimer, 3)).toEqual(["collect", null, null]);
    }
    expect(log).toEqual(["collect", "collect", "collect"]);
    expect(ticks(reclaimer, 2)).toEqual(["shrink", null]);
  });
});
