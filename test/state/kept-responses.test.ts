import { expect, test } from "bun:test";
import { KEEP_RESPONSES_MS, KeptResponses, type KeptResponse } from "../../src/state/kept-responses.ts";
import { functionCallItem, messageItem, outputText, type OutputItem } from "../../src/translate/openai-responses/convert-response.ts";

/** How Responses are kept, for whom, for how long and within what bound, and how a chain of them is found. */

const said = (id: string, text: string) => messageItem(id, [outputText(text)], "completed");
const asked = (text: string) => ({ role: "user" as const, content: text });

/** A kept Response `id` that answered `question` with `output`, continuing `previousId`. */
function response(id: string, output: OutputItem[], question = "Hi", previousId?: string): KeptResponse {
  return { response: { id, output }, input: [asked(question)], previousId };
}

test("a Response and its items are found by their owner for an hour, then not; never by another owner", () => {
  let now = 1_000_000;
  const kept = new KeptResponses(() => now);
  const call = functionCallItem("fc_1", { callId: "call_1", name: "weather", arguments: "{}" }, "completed");
  const first = response("resp_1", [said("msg_1", "Hello"), call]);
  kept.keep("user-a", first);
  expect(kept.recall("user-a", "resp_1")).toBe(first);
  expect(kept.recallItem("user-a", "msg_1")).toEqual(said("msg_1", "Hello"));
  expect(kept.recallItem("user-a", "fc_1")).toBe(call);
  expect(kept.recall("user-b", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-b", "msg_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_2")).toBeUndefined();
  now += KEEP_RESPONSES_MS - 1;
  expect(kept.recall("user-a", "resp_1")).toBeDefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeDefined();
  now += 1;
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
});

test("a chain is its Responses oldest first, or the first link not kept for the owner", () => {
  let now = 0;
  const kept = new KeptResponses(() => now);
  const first = response("resp_1", [said("msg_1", "one")], "a");
  kept.keep("user-a", first);
  now += 1_000;
  const second = response("resp_2", [said("msg_2", "two")], "b", "resp_1");
  const third = response("resp_3", [said("msg_3", "three")], "c", "resp_2");
  kept.keep("user-a", second);
  kept.keep("user-a", third);
  expect(kept.chain("user-a", "resp_3")).toEqual({ links: [first, second, third] });
  expect(kept.chain("user-a", "resp_1")).toEqual({ links: [first] });
  expect(kept.chain("user-b", "resp_3")).toEqual({ missing: "resp_3" });
  expect(kept.chain("user-a", "resp_9")).toEqual({ missing: "resp_9" });
  // The first expires first, and breaks the chain there.
  now = KEEP_RESPONSES_MS;
  expect(kept.chain("user-a", "resp_3")).toEqual({ missing: "resp_1" });
});

test("a chain that loops, which ids made by the gateway never do, ends at the number of Responses kept", () => {
  const kept = new KeptResponses(() => 0);
  kept.keep("user-a", response("resp_1", [], "a", "resp_2"));
  kept.keep("user-a", response("resp_2", [], "b", "resp_1"));
  expect(kept.chain("user-a", "resp_2")).toEqual({ missing: "resp_2" });
});

test("a forgotten Response is gone with its items; another owner cannot forget it", () => {
  const kept = new KeptResponses(() => 0);
  kept.keep("user-a", response("resp_1", [said("msg_1", "Hello")]));
  expect(kept.forget("user-b", "resp_1")).toBe(false);
  expect(kept.recall("user-a", "resp_1")).toBeDefined();
  expect(kept.forget("user-a", "resp_1")).toBe(true);
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
  expect(kept.forget("user-a", "resp_1")).toBe(false);
});

test("past the bound on their text, input and output alike, the oldest Responses go first", () => {
  const kept = new KeptResponses(() => 0, 1_000);
  kept.keep("user-a", response("resp_1", [said("msg_1", "x".repeat(300))]));
  // Its output is short, its input long: the input counts.
  kept.keep("user-a", response("resp_2", [said("msg_2", "y")], "q".repeat(300), "resp_1"));
  expect(kept.chain("user-a", "resp_2")).toMatchObject({ links: [{ previousId: undefined }, { previousId: "resp_1" }] });
  kept.keep("user-a", response("resp_3", [said("msg_3", "z".repeat(300))]));
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
  expect(kept.chain("user-a", "resp_2")).toEqual({ missing: "resp_1" });
  expect(kept.recall("user-a", "resp_3")).toBeDefined();
  kept.keep("user-a", response("resp_4", [said("msg_4", "w")], "q".repeat(300)));
  expect(kept.recall("user-a", "resp_2")).toBeUndefined();
  expect(kept.recall("user-a", "resp_3")).toBeDefined();
});

test("a forgotten Response frees its room at once, and the oldest of the others still go first", () => {
  const kept = new KeptResponses(() => 0, 1_800);
  for (const n of [1, 2, 3]) kept.keep("user-a", response(`resp_${n}`, [said(`msg_${n}`, "x".repeat(400))]));
  kept.forget("user-a", "resp_2");
  kept.keep("user-a", response("resp_4", [said("msg_4", "x".repeat(400))]));
  expect(["resp_1", "resp_3", "resp_4"].map((id) => kept.recall("user-a", id) !== undefined)).toEqual([true, true, true]);
  kept.keep("user-a", response("resp_5", [said("msg_5", "x".repeat(400))]));
  expect(["resp_1", "resp_3", "resp_4", "resp_5"].map((id) => kept.recall("user-a", id) !== undefined)).toEqual([false, true, true, true]);
});
