import { describe, expect, test } from "bun:test";
import { IdleReclaimer } from "../../src/lib/idle-reclaimer.ts";

/** An IdleReclaimer whose reclaims are counted. */
function counted(): { reclaimer: IdleReclaimer; reclaims: () => number } {
  let reclaims = 0;
  return { reclaimer: new IdleReclaimer(() => (reclaims += 1)), reclaims: () => reclaims };
}

describe("IdleReclaimer", () => {
  test("a gateway that never served a request never reclaims", () => {
    const { reclaimer, reclaims } = counted();
    for (let i = 0; i < 5; i++) expect(reclaimer.tick()).toBe(false);
    expect(reclaims()).toBe(0);
  });

  test("reclaims once on the first quiet tick after traffic, not on the busy tick itself", () => {
    const { reclaimer, reclaims } = counted();
    reclaimer.noteRequest();
    reclaimer.noteRequest();
    expect(reclaimer.tick()).toBe(false); // requests started during this tick
    expect(reclaimer.tick()).toBe(true); // a whole tick without one
    expect(reclaimer.tick()).toBe(false); // nothing new since
    expect(reclaims()).toBe(1);
  });

  test("never reclaims while every tick sees a request", () => {
    const { reclaimer, reclaims } = counted();
    for (let i = 0; i < 20; i++) {
      reclaimer.noteRequest();
      expect(reclaimer.tick()).toBe(false);
    }
    expect(reclaims()).toBe(0);
  });

  test("reclaims again after the next burst", () => {
    const { reclaimer, reclaims } = counted();
    reclaimer.noteRequest();
    reclaimer.tick();
    reclaimer.tick();
    reclaimer.noteRequest();
    expect(reclaimer.tick()).toBe(false);
    expect(reclaimer.tick()).toBe(true);
    expect(reclaims()).toBe(2);
  });
});
