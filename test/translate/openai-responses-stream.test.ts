import { describe, expect, test } from "bun:test";
import type { StreamPart } from "../../src/canonical/chat.ts";
import { renderResponsesEvents } from "../../src/translate/openai-responses/convert-stream.ts";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";

/**
 * The Responses renderer on its own, for orders of parts that the loopback upstreams' fixtures
 * do not give: text after tool calls, tool calls interleaved, a refusal without words, a
 * failure before anything was said. Every rendering is also fed to the openai SDK's own
 * accumulator, which throws on an event it cannot place.
 */

const head = { id: "resp_test", model: "m", echo: {} };

/** The events `parts` render to, parsed, in order; each SSE event's name is checked to be its data's type. */
function render(parts: StreamPart[]): any[] {
  const step = renderResponsesEvents(head, () => 1_700_000_000_000);
  let text = "";
  const output = { enqueue: (chunk: string) => void (text += chunk) };
  for (const part of parts) step.transform(part, output);
  step.flush?.(output);
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split("\n");
      const event = JSON.parse(dataLine!.slice("data: ".length));
      expect(eventLine).toBe(`event: ${event.type}`);
      return event;
    });
}

/** The Response the SDK's accumulator builds from `events`. */
function accumulated(events: any[]): any {
  let snapshot: any;
  for (const event of events) snapshot = accumulateResponse(event, snapshot);
  return snapshot;
}

const start: StreamPart = { type: "start", id: "up-1", model: "up", created: 1_700_000_123 };

describe("renderResponsesEvents", () => {
  test("text, two tool calls interleaved, text again: four items in order, the message closed where the calls begin and the calls where text begins", () => {
    const events = render([
      start,
      { type: "text-delta", text: "Let me look." },
      { type: "tool-call-start", index: 0, id: "call_a", name: "a" },
      { type: "tool-call-start", index: 1, id: "call_b", name: "b" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"x":' },
      { type: "tool-call-delta", index: 1, argumentsDelta: '{"y":2}' },
      { type: "tool-call-delta", index: 0, argumentsDelta: "1}" },
      { type: "text-delta", text: "Done." },
      { type: "usage", usage: { inputTokens: 5, outputTokens: 7 } },
      { type: "finish", finishReason: "tool_calls" },
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const final = events.at(-1);
    expect(final.type).toBe("response.completed");
    expect(final.response.created_at).toBe(1_700_000_123);
    expect(final.response.output.map((item: any) => [item.type, item.status])).toEqual([
      ["message", "completed"],
      ["function_call", "completed"],
      ["function_call", "completed"],
      ["message", "completed"],
    ]);
    expect(final.response.output.slice(1, 3).map((item: any) => [item.call_id, item.arguments])).toEqual([
      ["call_a", '{"x":1}'],
      ["call_b", '{"y":2}'],
    ]);
    expect(final.response.usage).toMatchObject({ input_tokens: 5, output_tokens: 7, total_tokens: 12 });
    const snapshot = accumulated(events);
    expect(snapshot.output_text).toBe("Let me look.Done.");
    expect(snapshot.output).toEqual(final.response.output);
  });

  test("a refusal without words gets the gateway's words in a refusal part", () => {
    const events = render([start, { type: "finish", finishReason: "refusal" }]);
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.refusal.delta",
      "response.refusal.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.at(-1).response.output[0].content).toEqual([{ type: "refusal", refusal: expect.stringMatching(/refused/) }]);
    accumulated(events);
  });

  test("a failure before any part: the Response is created, then the error event and response.failed end it", () => {
    const events = render([{ type: "error", message: "upstream went away" }]);
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "error", "response.failed"]);
    expect(events[2]).toMatchObject({ code: "upstream_error", message: "upstream went away", param: null });
    expect(events[3].response).toMatchObject({ status: "failed", error: { code: "server_error", message: "upstream went away" } });
    accumulated(events);
  });

  test("a failure mid-message: the item is incomplete in the failed Response, and nothing follows", () => {
    const events = render([start, { type: "text-delta", text: "Hel" }, { type: "error", message: "cut" }, { type: "text-delta", text: "lo" }]);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "response.failed"]);
    expect(events.at(-1).response.output).toEqual([
      { type: "message", id: expect.stringMatching(/^msg_/), status: "incomplete", role: "assistant", content: [{ type: "output_text", text: "Hel", annotations: [] }] },
    ]);
  });

  test("a content filter ends the Response incomplete with that reason", () => {
    const events = render([start, { type: "text-delta", text: "Once" }, { type: "finish", finishReason: "content_filter" }]);
    expect(events.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "incomplete", incomplete_details: { reason: "content_filter" } } });
  });
});
