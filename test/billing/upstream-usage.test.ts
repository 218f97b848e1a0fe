import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { fixtureEvents, jsonFixture, startOpenAiUpstream, summarizeStreamFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { account, chat, expectBooksBalanced, ledgerOf, newAccount, usageRows } from "./_inprocess.ts";
import { costOf, estimate, PRICE_BODY } from "./_support.ts";

/**
 * What an OpenAI-compatible upstream reports as usage decides the charge:
 * - no usage at all: the prompt and the answer's text are estimated (about 4 characters a token);
 * - zero usage: nothing is charged, the hold goes back as a `refund`;
 * - usage only in the last chunk of a stream: charged exactly per that usage;
 * - an upstream error after the hold: the caller gets 502 and the hold is refunded in full.
 */

const MODEL = "usage-model";
const ERROR_MODEL = "usage-error-model";
const PROMPT = "How are you doing today, loopback upstream?";
const MAX_TOKENS = 100;
const HOLD = costOf(estimate(PROMPT), MAX_TOKENS);
const START = 1_000_000;
const COMPLETION = jsonFixture("openai-chat-completion.json");
const ANSWER: string = COMPLETION.choices[0].message.content;
const STREAM = summarizeStreamFixture("openai-chat-stream.sse");

let gw: TestGateway;
let upstream: OpenAiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  upstream = await startOpenAiUpstream();
  for (const model of [MODEL, ERROR_MODEL]) {
    // One channel per model: the error cases must not cool the channel of the others.
    expect((await gw.admin("POST", "/v1/admin/channels", { name: model, type: "openai", base_url: upstream.url, models: [model] })).status).toBe(201);
    expect((await gw.admin("POST", "/v1/admin/prices", { model, ...PRICE_BODY })).status).toBe(200);
  }
});

afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const body = (stream: boolean, model = MODEL) => ({
  model,
  stream,
  ...(stream ? { stream_options: { include_usage: true } } : {}),
  max_tokens: MAX_TOKENS,
  messages: [{ role: "user", content: PROMPT }],
});

/** An SSE response of the stream fixture's events, with `usage` of every chunk replaced. */
function sseWithUsage(usage: (original: unknown) => unknown): Response {
  const text = fixtureEvents("openai-chat-stream.sse")
    .map((data) => {
      if (data === "[DONE]") return `data: ${data}\n\n`;
      const chunk = JSON.parse(data);
      const replaced = usage(chunk.usage);
      if (replaced === undefined) delete chunk.usage;
      else chunk.usage = replaced;
      // A chunk that carried only usage is dropped when the usage is.
      if (replaced === undefined && chunk.choices.length === 0) return "";
      return `data: ${JSON.stringify(chunk)}\n\n`;
    })
    .join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

/** The usage object of the last chunk of a streamed OpenAI answer the caller read. */
function lastUsage(sse: string): any {
  let usage = null;
  for (const block of sse.split("\n\n")) {
    const data = block.replace(/^data: /, "").trim();
    if (data.startsWith("{") && JSON.parse(data).usage) usage = JSON.parse(data).usage;
  }
  return usage;
}

test("no usage reported (plain): charged the estimate of prompt and answer, settled once", async () => {
  const { usage: _dropped, ...withoutUsage } = COMPLETION;
  upstream.setBehavior({ completion: withoutUsage });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, body(false));
  expect(response.status).toBe(200);
  const json = await response.json();
  expect(json.choices[0].message.content).toBe(ANSWER);
  const requestId = response.headers.get("x-request-id")!;

  const [row] = await usageRows(gw, id);
  const cost = costOf(estimate(PROMPT), estimate(ANSWER));
  expect(row).toMatchObject({ request_id: requestId, status: 200, stream: 0, prompt_tokens: estimate(PROMPT), completion_tokens: estimate(ANSWER), cost_micros: cost });
  expect(row!.completion_tokens).toBeGreaterThan(0);
  expect(cost).toBeGreaterThan(0);
  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
    { kind: "settle", amount_micros: HOLD - cost, balance_after_micros: START - cost },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
  await expectBooksBalanced(gw);
});

test("no usage reported (stream): charged the estimate of prompt and streamed text", async () => {
  upstream.setBehavior({ script: () => sseWithUsage(() => undefined) });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, body(true));
  expect(response.status).toBe(200);
  const sse = await response.text();
  expect(sse).toContain("data: [DONE]");
  const requestId = response.headers.get("x-request-id")!;

  const [row] = await usageRows(gw, id);
  const cost = costOf(estimate(PROMPT), estimate(STREAM.text));
  expect(row).toMatchObject({ request_id: requestId, status: 200, stream: 1, prompt_tokens: estimate(PROMPT), completion_tokens: estimate(STREAM.text), cost_micros: cost });
  expect(row!.completion_tokens).toBeGreaterThan(0);
  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
    { kind: "settle", amount_micros: HOLD - cost, balance_after_micros: START - cost },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
  await expectBooksBalanced(gw);
});

const UNBELIEVABLE: [string, unknown][] = [
  ["negative", { prompt_tokens: -1e12, completion_tokens: -5, total_tokens: -1e12 }],
  ["fractional", { prompt_tokens: 10.5, completion_tokens: 3, total_tokens: 13.5 }],
  ["huge", { prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 1e300 }],
  // OpenAI always reports both counts; one missing would be billed as 0 tokens.
  ["empty", {}],
  ["without prompt_tokens", { completion_tokens: 5, total_tokens: 5 }],
  ["without completion_tokens", { prompt_tokens: 5, total_tokens: 5 }],
];

for (const [kind, usage] of UNBELIEVABLE) {
  for (const stream of [false, true]) {
    test(`${kind} usage reported (${stream ? "stream" : "plain"}): not believed, the estimate is charged`, async () => {
      upstream.setBehavior(stream ? { script: () => sseWithUsage((original) => (original ? usage : undefined)) } : { completion: { ...COMPLETION, usage } });
      const { id, key } = await newAccount(gw, START);
      const response = await chat(gw, key, body(stream));
      expect(response.status).toBe(200);
      await response.text();
      const answer = stream ? STREAM.text : ANSWER;
      const cost = costOf(estimate(PROMPT), estimate(answer));
      const [row] = await usageRows(gw, id);
      expect(row).toMatchObject({ status: 200, prompt_tokens: estimate(PROMPT), completion_tokens: estimate(answer), cost_micros: cost });
      expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
      await expectBooksBalanced(gw);
    });
  }
}

const ZERO = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

test("zero usage reported (plain): cost 0, status 200, the hold refunded", async () => {
  upstream.setBehavior({ completion: { ...COMPLETION, usage: ZERO } });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, body(false));
  expect(response.status).toBe(200);
  await response.json();
  const requestId = response.headers.get("x-request-id")!;

  const [row] = await usageRows(gw, id);
  expect(row).toMatchObject({ request_id: requestId, status: 200, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0 });
  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
    { kind: "refund", amount_micros: HOLD, balance_after_micros: START },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: START, total_spent_micros: 0 });
  await expectBooksBalanced(gw);
});

test("zero usage reported (stream): cost 0, status 200, the hold refunded", async () => {
  upstream.setBehavior({ script: () => sseWithUsage((u) => (u ? ZERO : u)) });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, body(true));
  expect(response.status).toBe(200);
  const sse = await response.text();
  expect(lastUsage(sse)).toMatchObject(ZERO);
  const requestId = response.headers.get("x-request-id")!;

  const [row] = await usageRows(gw, id);
  expect(row).toMatchObject({ request_id: requestId, status: 200, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0 });
  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
    { kind: "refund", amount_micros: HOLD, balance_after_micros: START },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: START, total_spent_micros: 0 });
  await expectBooksBalanced(gw);
});

test("usage only in the last chunk of a stream: charged exactly per that usage", async () => {
  // The recorded fixture: every chunk has "usage": null except the final one (27 in, 23 out).
  const events = fixtureEvents("openai-chat-stream.sse").filter((e) => e !== "[DONE]").map((e) => JSON.parse(e));
  expect(events.slice(0, -1).every((e) => e.usage === null)).toBe(true);
  expect(STREAM.usage).toMatchObject({ prompt_tokens: 27, completion_tokens: 23 });
  upstream.setBehavior({ chunkDelayMs: 1 });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, body(true));
  expect(response.status).toBe(200);
  const sse = await response.text();
  expect(lastUsage(sse)).toMatchObject({ prompt_tokens: 27, completion_tokens: 23 });
  const requestId = response.headers.get("x-request-id")!;

  const cost = costOf(27, 23);
  expect(cost).toBe(426);
  const [row] = await usageRows(gw, id);
  expect(row).toMatchObject({ request_id: requestId, status: 200, stream: 1, prompt_tokens: 27, completion_tokens: 23, cost_micros: cost });
  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
    { kind: "settle", amount_micros: HOLD - cost, balance_after_micros: START - cost },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
  await expectBooksBalanced(gw);
});

for (const stream of [false, true]) {
  test(`an upstream 500 after the hold (${stream ? "stream" : "plain"}): the caller gets 502, the hold is refunded in full`, async () => {
    upstream.setBehavior({ status: 500 });
    upstream.reset();
    const { id, key } = await newAccount(gw, START);
    const response = await chat(gw, key, body(stream, ERROR_MODEL));
    expect(response.status).toBe(502);
    expect((await response.json()).error).toBeTruthy();
    // The upstream was called (so the hold had been taken), once.
    expect(upstream.requests.length).toBe(1);
    const requestId = response.headers.get("x-request-id")!;

    const [row] = await usageRows(gw, id);
    expect(row).toMatchObject({ request_id: requestId, status: 502, prompt_tokens: 0, completion_tokens: 0, cost_micros: 0 });
    expect(await ledgerOf(gw, requestId)).toEqual([
      { kind: "hold", amount_micros: -HOLD, balance_after_micros: START - HOLD },
      { kind: "refund", amount_micros: HOLD, balance_after_micros: START },
    ]);
    expect(await account(gw, id)).toEqual({ balance_micros: START, total_spent_micros: 0 });
    await expectBooksBalanced(gw);
  });
}
