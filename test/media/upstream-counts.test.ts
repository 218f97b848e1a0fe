import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson, postUpload, priceModel, speechWav, wavSeconds } from "../helpers/openai-media-upstream.ts";
import { account, expectBooksBalanced, newAccount } from "../billing/_inprocess.ts";

/**
 * What a media upstream counts (rerank tokens, seconds of audio heard) is believed only when
 * it is a count the request could have used, as chat usage is (README "Usage rows"): anything
 * else is billed on the gateway's own estimate, so an upstream can neither make a request free
 * (a negative count, or one past the largest number) nor drain the account (1e12 seconds).
 */

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** The body the loopback upstream answers next, as text: JSON.stringify cannot write 1e400. */
let answer = "{}";

const START = 10_000_000;
/** 1000 USD per 1M tokens and per 1K documents: 1,000 micro-USD a token, 1 USD a document. */
const RERANK_PRICE = { mode: "rerank", input_per_million: 1000, per_1k_documents: 1000 };
/** "q" and "x" are a token each, and the query is read once per document. */
const RERANK_ESTIMATE_MICROS = 2 * 1_000 + 1_000_000;
/** The default transcription price: 0.006 USD a minute. */
const micros = (seconds: number) => Math.round((seconds * 6_000) / 60);
const WAV = speechWav("the upstream counts this audio as it pleases");

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      return new Response(answer, { headers: { "content-type": "application/json" } });
    },
  });
  gw = await startTestGateway({ strictPricing: true });
  await createChannel(gw, { name: "counting", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, models: ["count-rerank", "count-whisper"] });
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "count-rerank", ...RERANK_PRICE })).status).toBe(200);
  await priceModel(gw, "count-whisper", "transcriptions");
});

afterAll(async () => {
  await gw.close();
  upstream.stop(true);
});

/** Answers one request with `body`; returns the response, its account's spending, and checks the books. */
async function billedFor(body: string, send: (key: string) => Promise<Response>) {
  answer = body;
  const { id, key } = await newAccount(gw, START);
  const response = await send(key);
  expect(response.status).toBe(200);
  const json = await response.json().catch(() => null);
  await gw.services.usage.flush();
  await expectBooksBalanced(gw);
  const { balance_micros, total_spent_micros } = await account(gw, id);
  expect(balance_micros).toBe(START - total_spent_micros);
  return { json, spent: total_spent_micros };
}

const rerank = (key: string) => postJson(gw, key, "/v1/rerank", { model: "count-rerank", query: "q", documents: ["x"] });
const ranked = (count: string) => `{"results":[{"index":0,"relevance_score":1}],${count}}`;

test.each([
  ["a negative meta.tokens_used", '"meta":{"tokens_used":-1000000000}'],
  ["a meta.tokens_used past the largest number", '"meta":{"tokens_used":1e400}'],
  ["a fractional meta.tokens_used", '"meta":{"tokens_used":2.5}'],
  ["a negative usage.total_tokens", '"usage":{"total_tokens":-5}'],
  ["a meta.billed_units.input_tokens above 100 million", '"meta":{"billed_units":{"input_tokens":100000001}}'],
])("rerank with %s: the estimate is billed and shown, documents included", async (_, count) => {
  const { json, spent } = await billedFor(ranked(count), rerank);
  expect(spent).toBe(RERANK_ESTIMATE_MICROS);
  expect(json.meta.tokens_used).toBe(2);
});

test("rerank with a believable count: that count is billed", async () => {
  const { json, spent } = await billedFor(ranked('"meta":{"tokens_used":7}'), rerank);
  expect(spent).toBe(7 * 1_000 + 1_000_000);
  expect(json.meta.tokens_used).toBe(7);
});

const transcribe = (key: string) =>
  postUpload(gw, key, "/v1/audio/transcriptions", { bytes: WAV, name: "a.wav" }, { model: "count-whisper", response_format: "verbose_json" });

test.each([
  ["negative", -100],
  ["past what the file can hold", 1e12],
  ["so large that its price is past the largest number", 1e300],
])("a verbose_json duration that is %s: the file's own length is billed", async (_, duration) => {
  const { spent } = await billedFor(JSON.stringify({ text: "heard", duration }), transcribe);
  expect(spent).toBe(micros(wavSeconds(WAV)));
});

test.each([
  ["shorter than the header's", 1],
  ["a little longer than the header's", 0.5 + wavSeconds(WAV)],
])("a verbose_json duration %s is believed and billed", async (_, duration) => {
  const { spent } = await billedFor(JSON.stringify({ text: "heard", duration }), transcribe);
  expect(spent).toBe(micros(duration));
});
