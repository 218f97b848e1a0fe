import { expect, test } from "bun:test";
import { ReasoningRefusals } from "../../src/dispatch/refused-reasoning.ts";

/** The memory of models that refused a translated reasoning setting: for ten minutes, and a thousand of them at most. */

test("a refusal is remembered for ten minutes, then forgotten", () => {
  let now = 1_000_000;
  const refusals = new ReasoningRefusals(() => now);
  expect(refusals.has("a")).toBe(false);
  refusals.remember("a");
  now += 10 * 60_000 - 1;
  expect(refusals.has("a")).toBe(true);
  now += 1;
  expect(refusals.has("a")).toBe(false);
});

test("past a thousand refusals the oldest is forgotten first", () => {
  const refusals = new ReasoningRefusals(() => 0);
  for (let i = 0; i < 1_000; i++) refusals.remember(`model ${i}`);
  // Remembered again, the first becomes the newest.
  refusals.remember("model 0");
  refusals.remember("model 1000");
  expect(refusals.has("model 0")).toBe(true);
  expect(refusals.has("model 1")).toBe(false);
  expect(refusals.has("model 2")).toBe(true);
  expect(refusals.has("model 1000")).toBe(true);
});
