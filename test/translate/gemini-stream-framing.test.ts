import { expect, test } from "bun:test";
import { geminiFramingOf } from "../../src/translate/gemini/stream-framing.ts";
import { renderGeminiChunks } from "../../src/translate/gemini/convert-stream.ts";
import { relayGeminiChunks } from "../../src/translate/gemini/relay-native.ts";

/**
 * A Gemini caller's SSE keep-alive is the next event begun early: `data: `, then spaces. What
 * comes next, a chunk or the error event that ends a broken stream, whichever renderer writes
 * it, completes that event, so it is still one `data:` line of one JSON value, which is all
 * Google's legacy SDK reads (its pattern is copied below).
 */

const LEGACY_SDK_EVENT = /^data\: (.*)(?:\n\n|\r\r|\r\n\r\n)/;

/** The events `body` holds as the legacy SDK reads them, each parsed; throws on anything else. */
function legacyEvents(body: string): unknown[] {
  const events: unknown[] = [];
  for (let rest = body; rest !== ""; ) {
    const match = LEGACY_SDK_EVENT.exec(rest);
    if (!match) throw new Error(`not an event the legacy SDK reads: ${JSON.stringify(rest)}`);
    events.push(JSON.parse(match[1]!));
    rest = rest.slice(match[0].length);
  }
  return events;
}

const renderers = {
  translated: renderGeminiChunks,
  relayed: (model: string, _id: string, framing: ReturnType<typeof geminiFramingOf>) => relayGeminiChunks(model, 1, framing),
};

test.each(Object.keys(renderers))("%s: keep-alives, then an error: one event, the error object", (name) => {
  const framing = geminiFramingOf("sse");
  const render = renderers[name as keyof typeof renderers]("caller-model", "req_1", framing);
  let body = framing.wire.keepAlive() + framing.wire.keepAlive();
  expect(body).toBe("data:  ");
  render.transform({ type: "error", message: "upstream stream ended before the response was complete" }, { enqueue: (text) => void (body += text) });
  expect(legacyEvents(body)).toEqual([{ error: expect.objectContaining({ code: 502, status: "UNAVAILABLE" }) }]);
});

test("a keep-alive between chunks: each chunk still its own event", () => {
  const framing = geminiFramingOf("sse");
  const render = renderGeminiChunks("caller-model", "req_1", framing);
  let body = "";
  const output = { enqueue: (text: string) => void (body += text) };
  render.transform({ type: "text-delta", text: "Hello" }, output);
  body += framing.wire.keepAlive();
  render.transform({ type: "text-delta", text: " world" }, output);
  render.transform({ type: "finish", finishReason: "stop" }, output);
  render.flush!(output);
  const texts = legacyEvents(body).map((chunk: any) => chunk.candidates[0].content.parts[0].text);
  expect(texts).toEqual(["Hello", " world", ""]);
});
