import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";
import { waitFor } from "../billing/_support.ts";
import { estimateTokens } from "../../src/lib/estimate-tokens.ts";

/**
 * GATEWAY_MAX_UPSTREAM_BODY_BYTES bounds one event of an upstream stream: the line it has not
 * ended plus the data lines of the event it has not ended. An upstream past it, by a line
 * without a newline or by an event of endless data lines, ends the caller's stream with the
 * format's error event naming the limit; the upstream request is cancelled, and the request
 * is settled for what was streamed, with one usage row saying 502 and no hold left open. An
 * event just under the limit passes intact.
 */

const LIMIT = 64 * 1024;
const MODEL = "event-limit-model";
const TOO_LARGE_EVENT = `data: ${JSON.stringify({
  error: { message: `the upstream sent an event larger than GATEWAY_MAX_UPSTREAM_BODY_BYTES (${LIMIT} bytes)`, type: "upstream_error", code: 502 },
})}\n\n`;

let gw: TestGateway;
let upstream: OpenAiUpstream;
let geminiUpstream: GeminiUpstream;
const GEMINI_MODEL = "event-limit-gemini";

beforeAll(async () => {
  // An idle timeout that a stream the gateway kept waiting on would meet, but no test reaches.
  gw = await startTestGateway({ env: { GATEWAY_MAX_UPSTREAM_BODY_BYTES: String(LIMIT), GATEWAY_STREAM_IDLE_TIMEOUT_MS: "3000" } });
  upstream = await startOpenAiUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "loopback", type: "openai", base_url: upstream.url, models: [MODEL] })).status).toBe(201);
  geminiUpstream = await startGeminiUpstream();
  const gemini = { name: "loopback-gemini", type: "gemini", base_url: geminiUpstream.url, api_key: "test-key", models: [GEMINI_MODEL] };
  expect((await gw.admin("POST", "/v1/admin/channels", gemini)).status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
  await geminiUpstream.close();
});

/** One OpenAI stream chunk's event. */
function chunkEvent(delta: object, finishReason: string | null = null): string {
  const chunk = { id: "chatcmpl-limit", object: "chat.completion.chunk", created: 1751974412, model: MODEL, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/**
 * Makes the upstream (the openai one unless `target` says) answer the next stream with
 * `pieces`, each written on its own, and then end, or (with `hold`) keep the connection open;
 * `cancelled` says whether the gateway let go.
 */
function upstreamSends(pieces: readonly string[], hold: boolean, target: OpenAiUpstream | GeminiUpstream = upstream): { readonly cancelled: boolean } {
  const state = { cancelled: false };
  const encoder = new TextEncoder();
  target.setBehavior({
    script: () => {
      let next = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await Bun.sleep(1);
          if (next < pieces.length) controller.enqueue(encoder.encode(pieces[next++]!));
          else if (!hold) controller.close();
          else await new Promise(() => {});
        },
        cancel() {
          state.cancelled = true;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return state;
}

function streamChat(): Promise<Response> {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hi" }], stream: true }),
    signal: AbortSignal.timeout(10_000),
  });
}

/** A caller's stream that began with "Hello" and was then ended for an event past the limit; its one usage row. */
async function expectEndedForSize(response: Response, upstreamState: { readonly cancelled: boolean }) {
  expect(response.status).toBe(200);
  const body = await response.text();
  expect(body).toContain('"content":"Hello"');
  expect(body.endsWith(TOO_LARGE_EVENT)).toBe(true);
  expect(body).not.toContain("[DONE]");
  await waitFor("the upstream request to be cancelled", () => upstreamState.cancelled);
  // Settled for what was streamed: no usage came, so the text counts at 4 characters a token.
  const row = await onlyUsageRowOf(gw, response);
  expect(row).toMatchObject({ status: 502, completion_tokens: estimateTokens("Hello") });
}

const HELLO = [chunkEvent({ role: "assistant", content: "" }), chunkEvent({ content: "Hello" })];

test("a line that never ends is given up once it passes the limit", async () => {
  const unended = ['data: {"choices":[{"delta":{"content":"', ...Array.from({ length: 12 }, () => "x".repeat(8192))];
  const state = upstreamSends([...HELLO, ...unended], true);
  await expectEndedForSize(await streamChat(), state);
});

test("an event of endless short data lines is given up once they pass the limit", async () => {
  const lines = Array.from({ length: 12 }, () => `data: ${"y".repeat(8192)}\n`);
  const state = upstreamSends([...HELLO, ...lines], true);
  await expectEndedForSize(await streamChat(), state);
});

test("an event just under the limit, its line sent in pieces, passes intact", async () => {
  const text = "z".repeat(LIMIT - 1024);
  const large = chunkEvent({ content: text });
  expect(large.length).toBeLessThan(LIMIT);
  const pieces = large.match(/[^]{1,4096}/g)!;
  upstreamSends([...HELLO, ...pieces, chunkEvent({}, "stop"), "data: [DONE]\n\n"], false);
  const response = await streamChat();
  const body = await response.text();
  const events = body.split("\n\n").filter((event) => event.startsWith("data: {"));
  const streamed = events.map((event) => JSON.parse(event.slice(6)).choices[0]?.delta?.content ?? "").join("");
  expect(streamed).toBe(`Hello${text}`);
  expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
  expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
});

/**
 * Tool call arguments are gathered across events for callers whose format sends a call whole
 * (Gemini) or one at a time (Anthropic): their total is bounded too, however small each
 * event, and past it the caller's stream ends with its format's error event.
 */
const TOOL_ARGUMENTS_TOO_LARGE = `the upstream sent tool call arguments larger than GATEWAY_MAX_UPSTREAM_BODY_BYTES (${LIMIT} bytes)`;

const TOOL_CALLERS = [
  {
    format: "a Gemini caller",
    call: (): Promise<Response> =>
      gw.fetch(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
        method: "POST",
        headers: bearer(gw.demoKey),
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Write" }] }], tools: [{ functionDeclarations: [{ name: "write", parameters: { type: "object" } }] }] }),
        signal: AbortSignal.timeout(10_000),
      }),
    errorEvent: `data: ${JSON.stringify({ error: { message: TOOL_ARGUMENTS_TOO_LARGE, type: "upstream_error", code: 502, status: "UNAVAILABLE" } })}\n\n`,
  },
  {
    format: "an Anthropic caller",
    call: (): Promise<Response> =>
      gw.fetch("/v1/messages", {
        method: "POST",
        headers: bearer(gw.demoKey),
        body: JSON.stringify({ model: MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: "Write" }], tools: [{ name: "write", input_schema: { type: "object" } }] }),
        signal: AbortSignal.timeout(10_000),
      }),
    errorEvent: `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "api_error", message: TOOL_ARGUMENTS_TOO_LARGE } })}\n\n`,
  },
];

/** The start of one tool call, then its arguments `{"text":"<text>"}` in events of 8 KiB. */
function toolCallEvents(text: string): string[] {
  const start = chunkEvent({ role: "assistant", tool_calls: [{ index: 0, id: "call_write", type: "function", function: { name: "write", arguments: "" } }] });
  const pieces = `{"text":"${text}"}`.match(/[^]{1,8192}/g)!;
  return [start, ...pieces.map((piece) => chunkEvent({ tool_calls: [{ index: 0, function: { arguments: piece } }] }))];
}

for (const caller of TOOL_CALLERS) {
  test(`${caller.format}: a tool call streamed in small events past the limit ends the stream`, async () => {
    const state = upstreamSends(toolCallEvents("w".repeat(LIMIT + 1024)), true);
    const response = await caller.call();
    expect(response.status).toBe(200);
    expect((await response.text()).endsWith(caller.errorEvent)).toBe(true);
    await waitFor("the upstream request to be cancelled", () => state.cancelled);
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });
}

test("a Gemini caller: a tool call just under the limit comes whole", async () => {
  const text = "w".repeat(LIMIT - 1024);
  upstreamSends([...toolCallEvents(text), chunkEvent({}, "tool_calls"), "data: [DONE]\n\n"], false);
  const response = await TOOL_CALLERS[0]!.call();
  const events = (await response.text()).split("\n\n").filter((event) => event.startsWith("data: "));
  const calls = events.flatMap((event) => JSON.parse(event.slice(6)).candidates?.[0]?.content?.parts ?? []).filter((part: any) => part.functionCall);
  expect(calls).toHaveLength(1);
  expect(calls[0].functionCall).toMatchObject({ name: "write", args: { text } });
  expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
});

/**
 * A Gemini caller on a gemini channel gets the upstream's chunks as they came, but the one that
 * finishes the answer, and anything after it, waits for the body's end (Gemini streams have no
 * end event), so the end reaches the caller after the usage row. What waits is bounded too: an
 * upstream that goes on sending after its answer finished, holding its connection open, ends
 * the caller's stream with the error event, and is cancelled.
 */
test("a Gemini caller: chunks past the limit after the answer finished end the stream", async () => {
  const chunk = (body: object) => `data: ${JSON.stringify(body)}\r\n\r\n`;
  const finished = chunk({ candidates: [{ content: { role: "model", parts: [{ text: "Hello" }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } });
  const after = Array.from({ length: 12 }, () => chunk({ candidates: [{ content: { role: "model", parts: [{ text: "x".repeat(8192) }] }, index: 0 }] }));
  const state = upstreamSends([finished, ...after], true, geminiUpstream);
  const response = await gw.fetch(`/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.status).toBe(200);
  const message = `the upstream went on after its answer finished, past GATEWAY_MAX_UPSTREAM_BODY_BYTES (${LIMIT} bytes)`;
  expect(await response.text()).toBe(`data: ${JSON.stringify({ error: { message, type: "upstream_error", code: 502, status: "UNAVAILABLE" } })}\n\n`);
  await waitFor("the upstream request to be cancelled", () => state.cancelled);
  expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
});

/**
 * With several candidates (candidateCount), what waits is what comes once the last of them
 * finished: the others go on streaming after candidate 0 finished, and reach the caller as
 * they come, however much they write.
 */
test("a Gemini caller asking for three candidates: the others, past the limit after candidate 0 finished, come whole", async () => {
  const chunk = (body: object) => `data: ${JSON.stringify(body)}\r\n\r\n`;
  const candidate = (index: number, text: string, finishReason?: string) => ({ content: { role: "model", parts: [{ text }] }, index, ...(finishReason ? { finishReason } : {}) });
  const first = chunk({ candidates: [candidate(0, "Hello", "STOP"), candidate(1, "Hi"), candidate(2, "Hey")] });
  const more = Array.from({ length: 12 }, (_, i) => chunk({ candidates: [candidate(1 + (i % 2), "x".repeat(8192))] }));
  const last = chunk({ candidates: [candidate(1, "!", "STOP"), candidate(2, "!", "STOP")], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 24_580, totalTokenCount: 24_583 } });
  upstreamSends([first, ...more, last], false, geminiUpstream);
  const response = await gw.fetch(`/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { candidateCount: 3 } }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.status).toBe(200);
  const events = (await response.text()).trim().split(/\r?\n\r?\n/).map((event) => JSON.parse(event.replace(/^data: /, "")));
  expect(events).toHaveLength(14);
  expect(events.some((event) => event.error)).toBe(false);
  expect(events.at(-1).candidates.map((c: { finishReason: string }) => c.finishReason)).toEqual(["STOP", "STOP"]);
  expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
});
