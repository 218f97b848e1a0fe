import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { bearer } from "../helpers/common.ts";
import { expectBooksBalanced, newAccount, readUntilThenAbort, usageRows } from "./_inprocess.ts";
import { estimate, INPUT_MICROS_PER_TOKEN, OUTPUT_MICROS_PER_TOKEN, PRICE_BODY } from "./_support.ts";

/**
 * A stream that ends before its usage came (the client left, the upstream broke off) is
 * billed for the prompt as the upstream counted it, when it said so as the answer began:
 * Anthropic's message_start (cache reads and writes included, cache reads at the cached
 * price), Gemini's usageMetadata on each chunk; the answer is counted from the streamed text,
 * and an Anthropic message_delta's output count, once it came, is the answer's. The prompt's
 * estimate (4 characters a token) is far off for text other than English and counts no
 * image: a caller who left after the first token paid a quarter of a Chinese prompt.
 */

const ANTHROPIC_MODEL = "reported-prompt-claude";
const GEMINI_MODEL = "reported-prompt-gemini";
const PROMPT = "Hi";
const CACHED_MICROS_PER_TOKEN = 0.3;
const START = 1_000_000;

let gw: TestGateway;
let anthropic: AnthropicUpstream;
let gemini: GeminiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  anthropic = await startAnthropicUpstream();
  gemini = await startGeminiUpstream();
  for (const [type, url, model] of [["anthropic", anthropic.url, ANTHROPIC_MODEL], ["gemini", gemini.url, GEMINI_MODEL]] as const) {
    expect((await gw.admin("POST", "/v1/admin/channels", { name: model, type, base_url: url, api_key: "k", models: [model] })).status).toBe(201);
    expect((await gw.admin("POST", "/v1/admin/prices", { model, ...PRICE_BODY, cached_input_per_million: CACHED_MICROS_PER_TOKEN })).status).toBe(200);
  }
});

afterAll(async () => {
  await gw.close();
  await anthropic.close();
  await gemini.close();
});

/** An event stream of `events` that then stays open (until the gateway lets go) or ends there. */
function streamOf(events: string[], then: "hold" | "end"): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(event));
      if (then === "end") controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

const anthropicEvent = (data: { type: string; [field: string]: unknown }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const MESSAGE_START = anthropicEvent({
  type: "message_start",
  message: { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [], usage: { input_tokens: 1_200, cache_read_input_tokens: 3_000, cache_creation_input_tokens: 500, output_tokens: 1 } },
});
const HELLO = [anthropicEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }), anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } })];
const MESSAGE_DELTA = anthropicEvent({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 40 } });
/** The prompt message_start counted: input_tokens plus the cache's reads and writes, 3,000 of them reads. */
const ANTHROPIC_PROMPT = 1_200 + 3_000 + 500;

const geminiChunk = (text: string, last = false) =>
  `data: ${JSON.stringify({
    candidates: [{ content: { role: "model", parts: [{ text }] }, ...(last ? { finishReason: "STOP" } : {}) }],
    usageMetadata: last ? { promptTokenCount: 900, candidatesTokenCount: 12, totalTokenCount: 912 } : { promptTokenCount: 900, totalTokenCount: 900 },
    modelVersion: "gemini",
  })}\r\n\r\n`;

/** The cost at PRICE_BODY with `cached` of the prompt's tokens at the cached price. */
const costOf = (prompt: number, cached: number, output: number) =>
  Math.round((prompt - cached) * INPUT_MICROS_PER_TOKEN + cached * CACHED_MICROS_PER_TOKEN + output * OUTPUT_MICROS_PER_TOKEN);

/** Streams `path` with `body` for a new account, hangs up once `until` holds of what came (or reads to the end without it); the one usage row. */
async function rowOf(path: string, body: object, until?: (text: string) => boolean) {
  const { id, key } = await newAccount(gw, START);
  const controller = new AbortController();
  const response = await gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(body), signal: controller.signal });
  expect(response.status).toBe(200);
  if (until) await readUntilThenAbort(response, controller, until);
  else await response.text();
  const rows = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** A streamed request in the shape both the OpenAI and the Anthropic format take. */
const streamed = (model: string) => ({ model, stream: true, max_tokens: 100, messages: [{ role: "user", content: PROMPT }] });

test("Anthropic upstream, OpenAI caller who leaves after the first token: the prompt as message_start counted it, cache reads at their price", async () => {
  anthropic.setBehavior({ script: () => streamOf([MESSAGE_START, ...HELLO], "hold") });
  const row = await rowOf("/v1/chat/completions", streamed(ANTHROPIC_MODEL), (text) => text.includes("Hello"));
  expect(row).toMatchObject({ status: 499, prompt_tokens: ANTHROPIC_PROMPT, completion_tokens: estimate("Hello"), cost_micros: costOf(ANTHROPIC_PROMPT, 3_000, estimate("Hello")) });
});

test("Anthropic caller who leaves after message_delta, before message_stop: the usage the upstream reported, whole", async () => {
  anthropic.setBehavior({ script: () => streamOf([MESSAGE_START, ...HELLO, MESSAGE_DELTA], "hold") });
  const row = await rowOf("/v1/messages", streamed(ANTHROPIC_MODEL), (text) => text.includes("message_delta"));
  expect(row).toMatchObject({ status: 499, prompt_tokens: ANTHROPIC_PROMPT, completion_tokens: 40, cost_micros: costOf(ANTHROPIC_PROMPT, 3_000, 40) });
});

test("Anthropic upstream that breaks off after the first token: a 502 row with the prompt as message_start counted it", async () => {
  anthropic.setBehavior({ script: () => streamOf([MESSAGE_START, ...HELLO], "end") });
  const row = await rowOf("/v1beta/models/" + ANTHROPIC_MODEL + ":streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
  expect(row).toMatchObject({ status: 502, prompt_tokens: ANTHROPIC_PROMPT, completion_tokens: estimate("Hello") });
});

test("Gemini upstream, OpenAI caller who leaves after the first chunk: the prompt as usageMetadata counted it", async () => {
  gemini.setBehavior({ script: () => streamOf([geminiChunk("Hello")], "hold") });
  const row = await rowOf("/v1/chat/completions", streamed(GEMINI_MODEL), (text) => text.includes("Hello"));
  expect(row).toMatchObject({ status: 499, prompt_tokens: 900, completion_tokens: estimate("Hello"), cost_micros: costOf(900, 0, estimate("Hello")) });
});

test("Gemini upstream, OpenAI caller who leaves after the last chunk, before the body ends: the usage that chunk reported", async () => {
  gemini.setBehavior({ script: () => streamOf([geminiChunk("Hello"), geminiChunk(" world", true)], "hold") });
  const row = await rowOf("/v1/chat/completions", streamed(GEMINI_MODEL), (text) => text.includes("world"));
  expect(row).toMatchObject({ status: 499, prompt_tokens: 900, completion_tokens: 12, cost_micros: costOf(900, 0, 12) });
});

test("an upstream that did not count the prompt up front: the prompt is estimated, as before", async () => {
  const unreported = MESSAGE_START.replace(/"usage":\{[^}]*\}/, '"usage":{}');
  anthropic.setBehavior({ script: () => streamOf([unreported, ...HELLO], "hold") });
  const row = await rowOf("/v1/chat/completions", streamed(ANTHROPIC_MODEL), (text) => text.includes("Hello"));
  expect(row).toMatchObject({ status: 499, prompt_tokens: estimate(PROMPT), completion_tokens: estimate("Hello") });
});
