import { expect, test } from "bun:test";
import type { StreamPart } from "../../src/canonical/chat.ts";
import type { BatchSource } from "../../src/streams/batch-source.ts";
import { holdUntilAnswer } from "../../src/streams/hold-until-answer.ts";

/** A source that gives `batches`, then waits for ever, as an upstream that has gone quiet does. */
function thenQuiet(batches: StreamPart[][]): BatchSource<StreamPart> {
  const queue = [...batches];
  return { read: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise(() => {})), cancel: () => Promise.resolve() };
}

const native = (event: string, body: Record<string, unknown>): StreamPart => ({ type: "native", event: { event, data: JSON.stringify(body) }, body });
/** Long enough that a test waiting for it times out: a hold that ends must end for what it read. */
const FOREVER_MS = 60_000;

test("a thinking model's first thinking delta ends the hold: the caller is not kept waiting for its text", async () => {
  const start = native("message_start", { type: "message_start", message: { id: "msg_1" } });
  const block = native("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } });
  const thinking = native("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me see" } });
  const held = await holdUntilAnswer(thenQuiet([[start], [block], [thinking]]), FOREVER_MS);
  expect(await held.read()).toEqual([start, block, thinking]);
});

test("framing alone keeps the hold until the answer begins; an error before it is the channel's failure", async () => {
  const start: StreamPart = { type: "start", id: "c1", model: "m", created: 1 };
  const text: StreamPart = { type: "text-delta", text: "Hi" };
  const held = await holdUntilAnswer(thenQuiet([[start], [], [text]]), FOREVER_MS);
  expect(await held.read()).toEqual([start, text]);

  const failing = holdUntilAnswer(thenQuiet([[start], [{ type: "error", message: "overloaded" }]]), FOREVER_MS);
  await expect(failing).rejects.toThrow("overloaded");
});
