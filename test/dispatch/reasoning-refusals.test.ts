import { expect, test } from "bun:test";
import { ReasoningRefusals } from "../../src/dispatch/refused-reasoning.ts";

/** The memory of models that refused a translated reasoning setting, and what it became for them: for ten minutes, and a thousand of them at most. */

test("a refusal and its remedy are remembered for ten minutes, then forgotten", () => {
  let now = 1_000_000;
  const refusals = new ReasoningRefusals(() => now);
  expect(refusals.remedyFor("a")).toBeUndefined();
  refusals.remember("a", "adaptive");
  now += 10 * 60_000 - 1;
  expect(refusals.remedyFor("a")).toBe("adaptive");
  now += 1;
  expect(refusals.remedyFor("a")).toBeUndefined();
});

test("past a thousand refusals the oldest is forgotten first", () => {
  const refusals = new ReasoningRefusals(() => 0);
  for (let i = 0; i < 1_000; i++) refusals.remember(`model ${i}`, "leave out");
  // Remembered again, the first becomes the newest.
  refusals.remember("model 0", "leave out");
  refusals.remember("model 1000", "leave out");
  expect(refusals.remedyFor("model 0")).toBe("leave out");
  expect(refusals.remedyFor("model 1")).toBeUndefined();
  expect(refusals.remedyFor("model 2")).toBe("leave out");
  expect(refusals.remedyFor("model 1000")).toBe("leave out");
});
