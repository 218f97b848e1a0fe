import { describe, expect, test } from "bun:test";
import { readFixture } from "../helpers/openai-upstream.ts";
import { sseParserStep } from "../../src/streams/sse.ts";
import { chainSteps, type StreamStep } from "../../src/streams/stream-step.ts";
import { decodeOpenAiChunks } from "../../src/translate/openai-chat/convert-stream.ts";
import { relayOpenAiChunks } from "../../src/translate/openai-chat/relay-native.ts";
import { decodeAnthropicEvents } from "../../src/translate/anthropic-messages/convert-stream.ts";
import { relayAnthropicEvents } from "../../src/translate/anthropic-messages/relay-native.ts";
import { decodeGeminiChunks } from "../../src/translate/gemini/convert-stream.ts";
import { relayGeminiChunks } from "../../src/translate/gemini/relay-native.ts";

/** No bound on an event's size: these tests are about parsing, not about the limit. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/**
 * The relay steps over recorded upstream streams: SSE text in, the caller's SSE text out,
 * delivery by delivery, so a test can see what is sent at once and what waits for the end.
 */

const now = () => 1_700_000_000_000;

/** What `step` writes for each delivery, and (last) what it writes when the input ends. */
function deliveries(step: StreamStep<string, string>, pieces: readonly string[]): { each: string[]; atEnd: string } {
  const each: string[] = [];
  let text = "";
  const output = { enqueue: (piece: string) => void (text += piece) };
  for (const piece of pieces) {
    step.transform(piece, output);
    each.push(text);
    text = "";
  }
  step.flush?.(output);
  return { each, atEnd: text };
}

/** The SSE events of a fixture, one delivery each, with the fixture's own line ends. */
function fixtureDeliveries(name: string): string[] {
  return readFixture(name)
    .split(/(?<=\r?\n\r?\n)/)
    .filter((event) => event.trim() !== "");
}

const dataOf = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice("data: ".length)));

describe("openai relay", () => {
  const relay = (includeUsage: boolean) =>
    chainSteps(chainSteps(sseParserStep(UNBOUNDED), decodeOpenAiChunks(now, true)), relayOpenAiChunks("caller-model", includeUsage));

  test("each chunk leaves with its own delivery, renamed to the caller's model, and [DONE] comes only at the end", () => {
    const pieces = fixtureDeliveries("openai-chat-stream.sse");
    const { each, atEnd } = deliveries(relay(true), pieces);
    const upstreamChunks = pieces.filter((piece) => !piece.includes("[DONE]"));
    for (let i = 0; i < upstreamChunks.length; i++) {
      const [sent] = dataOf(each[i]!);
      const [original] = dataOf(upstreamChunks[i]!);
      expect(sent).toEqual({ ...original, model: "caller-model" });
    }
    expect(each.join("")).not.toContain("[DONE]");
    expect(atEnd).toBe("data: [DONE]\n\n");
  });

  test("without include_usage the usage chunk is left out and no chunk has a usage key", () => {
    const { each } = deliveries(relay(false), fixtureDeliveries("openai-chat-stream.sse"));
    const sent = dataOf(each.join(""));
    expect(sent.length).toBeGreaterThan(1);
    for (const chunk of sent) {
      expect("usage" in chunk).toBe(false);
      expect(chunk.choices.length).toBe(1);
    }
  });

  test("a stream cut short ends with the error event and no [DONE]", () => {
    const { each, atEnd } = deliveries(relay(true), fixtureDeliveries("openai-chat-stream-truncated.sse"));
    const all = each.join("") + atEnd;
    expect(all).not.toContain("[DONE]");
    const last = dataOf(all).at(-1);
    expect(last.error.type).toBeString();
    expect(last.error.message).toContain("ended before the response was complete");
  });
});

describe("anthropic relay", () => {
  const relay = () => chainSteps(chainSteps(sseParserStep(UNBOUNDED), decodeAnthropicEvents(now, true)), relayAnthropicEvents("caller-model"));

  test("events keep their names and data; message_start names the caller's model; message_stop waits for the end", () => {
    const pieces = fixtureDeliveries("anthropic-stream.sse");
    const { each, atEnd } = deliveries(relay(), pieces);
    expect(each.at(-1)).toBe("");
    expect(atEnd).toStartWith("event: message_stop\n");
    for (let i = 1; i < pieces.length - 1; i++) expect(dataOf(each[i]!)).toEqual(dataOf(pieces[i]!));
    const [start] = dataOf(each[0]!);
    const [original] = dataOf(pieces[0]!);
    expect(start).toEqual({ ...original, message: { ...original.message, model: "caller-model" } });
    expect(each.join("")).toContain("event: ping\n");
  });

  test("the upstream's own error event is relayed with its error type, and nothing follows", () => {
    const overloaded = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const pieces = [fixtureDeliveries("anthropic-stream.sse")[0]!, overloaded, fixtureDeliveries("anthropic-stream.sse")[1]!];
    const { each, atEnd } = deliveries(relay(), pieces);
    expect(each[1]).toBe(overloaded);
    expect(each[2]).toBe("");
    expect(atEnd).toBe("");
  });

  test("a stream cut short (no message_stop) ends with the gateway's error event and no message_stop", () => {
    const pieces = fixtureDeliveries("anthropic-stream.sse").slice(0, 4);
    const { atEnd } = deliveries(relay(), pieces);
    expect(atEnd).toStartWith("event: error\n");
    expect(dataOf(atEnd)[0].error.type).toBe("api_error");
  });

  test("events a compatible upstream sent without a name are named by their type", () => {
    const unnamed = fixtureDeliveries("anthropic-stream.sse").map((piece) => piece.replace(/^event: .*\n/, ""));
    const { each, atEnd } = deliveries(relay(), unnamed);
    const names = [...each, atEnd].filter(Boolean).map((text) => text.split("\n")[0]);
    expect(names[0]).toBe("event: message_start");
    expect(names.at(-1)).toBe("event: message_stop");
  });
});

describe("gemini relay", () => {
  test("a blocked prompt (promptFeedback.blockReason, no candidates) is a finished answer, not a broken stream", () => {
    const step = chainSteps(chainSteps(sseParserStep(UNBOUNDED), decodeGeminiChunks(now, true)), relayGeminiChunks("caller-model", 1));
    const blocked = `data: ${JSON.stringify({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 }, modelVersion: "gemini-2.0-flash" })}\n\n`;
    const { each, atEnd } = deliveries(step, [blocked]);
    expect(each).toEqual([""]);
    expect(dataOf(atEnd)).toEqual([{ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 }, modelVersion: "caller-model" }]);
  });

  test("chunks leave as they come but for modelVersion; the one with finishReason waits for the end", () => {
    const step = chainSteps(chainSteps(sseParserStep(UNBOUNDED), decodeGeminiChunks(now, true)), relayGeminiChunks("caller-model", 1));
    const pieces = fixtureDeliveries("gemini-stream.sse");
    const { each, atEnd } = deliveries(step, pieces);
    expect(each.at(-1)).toBe("");
    const [final] = dataOf(atEnd);
    expect(final.candidates[0].finishReason).toBe("STOP");
    for (let i = 0; i < pieces.length - 1; i++) {
      const [original] = dataOf(pieces[i]!);
      expect(dataOf(each[i]!)).toEqual([{ ...original, modelVersion: "caller-model" }]);
    }
  });

  test("three candidates (candidateCount), candidate 0 finishing first: only the chunk in which the last one finishes waits for the end", () => {
    const step = chainSteps(chainSteps(sseParserStep(UNBOUNDED), decodeGeminiChunks(now, true, 3)), relayGeminiChunks("caller-model", 3));
    const pieces = fixtureDeliveries("gemini-stream-several.sse");
    const { each, atEnd } = deliveries(step, pieces);
    // The fixture's second chunk finishes candidate 0, its last the other two.
    expect(dataOf(pieces[1]!)[0].candidates[0].finishReason).toBe("STOP");
    for (let i = 0; i < pieces.length - 1; i++) expect(dataOf(each[i]!)).toEqual([{ ...dataOf(pieces[i]!)[0], modelVersion: "caller-model" }]);
    expect(each.at(-1)).toBe("");
    expect(dataOf(atEnd)).toEqual([{ ...dataOf(pieces.at(-1)!)[0], modelVersion: "caller-model" }]);
  });
});
