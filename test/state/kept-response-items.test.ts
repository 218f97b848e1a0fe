import { expect, test } from "bun:test";
import { KEEP_ITEMS_MS, KeptResponseItems } from "../../src/state/kept-response-items.ts";
import { functionCallItem, messageItem, outputText } from "../../src/translate/openai-responses/convert-response.ts";

/** How long the output items of a Response are kept, for whom, and within what bound. */

const said = (id: string, text: string) => messageItem(id, [outputText(text)], "completed");

test("an item is found by its owner for an hour, then not; never by another owner", () => {
  let now = 1_000_000;
  const kept = new KeptResponseItems(() => now);
  const call = functionCallItem("fc_1", { callId: "call_1", name: "weather", arguments: "{}" }, "completed");
  kept.keep("user-a", [said("msg_1", "Hello"), call]);
  expect(kept.recall("user-a", "msg_1")).toEqual(said("msg_1", "Hello"));
  expect(kept.recall("user-a", "fc_1")).toBe(call);
  expect(kept.recall("user-b", "msg_1")).toBeUndefined();
  expect(kept.recall("user-a", "msg_2")).toBeUndefined();
  now += KEEP_ITEMS_MS - 1;
  expect(kept.recall("user-a", "msg_1")).toBeDefined();
  now += 1;
  expect(kept.recall("user-a", "msg_1")).toBeUndefined();
});

test("past the bound on their text, the oldest items go first", () => {
  const kept = new KeptResponseItems(() => 0, 1_000);
  kept.keep("user-a", [said("msg_1", "x".repeat(400))]);
  kept.keep("user-a", [said("msg_2", "y".repeat(400))]);
  expect(kept.recall("user-a", "msg_1")).toBeDefined();
  kept.keep("user-a", [said("msg_3", "z".repeat(400))]);
  expect(kept.recall("user-a", "msg_1")).toBeUndefined();
  expect(kept.recall("user-a", "msg_2")).toBeDefined();
  expect(kept.recall("user-a", "msg_3")).toBeDefined();
});
