import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE, ANTHROPIC_STREAM_FIXTURE, editedAnthropicStream, summarizeAnthropicStream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { account, chat, expectBooksBalanced, ledgerOf, newAccount, startPricedAnthropic, usageRows } from "./_inprocess.ts";
import { bearer, estimate } from "./_support.ts";

/**
 * Anthropic bills a prompt-cache write above its input price: 1.25x for the 5-minute lifetime,
 * 2x for 1 hour, reported as cache_creation_input_tokens, split by lifetime in cache_creation.
 * The gateway charges each lifetime at its own write price, plain and streamed (message_start
 * gives the counts, message_delta may repeat them: counted once); a model without write prices
 * is charged them as input. What the caller is shown as its prompt's tokens does not change.
 * Prices, micro-USD a token: input 3, output 15, cache read 1, writes 3.75 (5 min) and 6 (1 h).
 */

const WRITE_PRICED = "cache-write-model";
const WRITE_5M_ONLY = "cache-write-5m-model";
const UNPRICED_WRITES = "cache-input-model";
const TOKEN_PRICES = { input_per_million: 3, output_per_million: 15, cached_input_per_million: 1 };
const PROMPT = "hello";
const MAX_TOKENS = 200;
const START = 10_000_000;

/** 50 uncached, 1,000 read, 2,000 written (1,200 for 5 minutes, 800 for an hour), 30 out. */
const USAGE = {
  input_tokens: 50,
  cache_read_input_tokens: 1000,
  cache_creation_input_tokens: 2000,
  cache_creation: { ephemeral_5m_input_tokens: 1200, ephemeral_1h_input_tokens: 800 },
  output_tokens: 30,
};
const PROMPT_TOKENS = 3050;
/** 50 x 3 + 1,000 x 1 + 1,200 x 3.75 + 800 x 6 + 30 x 15 */
const COST = 150 + 1000 + 4500 + 4800 + 450;

let gw: TestGateway;
let upstream: AnthropicUpstream;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gw, upstream, close } = await startPricedAnthropic([
    { model: WRITE_PRICED, ...TOKEN_PRICES, cache_write_per_million: 3.75, cache_write_1h_per_million: 6 },
    { model: WRITE_5M_ONLY, ...TOKEN_PRICES, cache_write_per_million: 3.75 },
    { model: UNPRICED_WRITES, ...TOKEN_PRICES },
  ]));
});

afterAll(() => close());

const messages = (key: string, body: object) => gw.fetch("/v1/messages", { method: "POST", headers: bearer(key), body: JSON.stringify(body) });

/** A request of `model` in the caller's format; `stream` asks for the usage as the last chunk where the format needs it. */
function ask(caller: "anthropic" | "openai", key: string, model: string, stream: boolean): Promise<Response> {
  const body = { model, stream, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: PROMPT }] };
  return caller === "anthropic" ? messages(key, body) : chat(gw, key, stream ? { ...body, stream_options: { include_usage: true } } : body);
}

/** The one usage row of a new account's request, after the books are checked; also what the caller was shown. */
async function charged(caller: "anthropic" | "openai", model: string, stream: boolean) {
  const { id, key } = await newAccount(gw, START);
  const response = await ask(caller, key, model, stream);
  expect(response.status).toBe(200);
  const text = await response.text();
  const [row] = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  expect((await account(gw, id)).total_spent_micros).toBe(row!.cost_micros);
  return { row: row!, text };
}

for (const caller of ["anthropic", "openai"] as const) {
  test(`plain answer to an ${caller} caller: each lifetime's writes at its write price, the prompt shown as before`, async () => {
    upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
    const { row, text } = await charged(caller, WRITE_PRICED, false);
    expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 30, cost_micros: COST });
    const usage = JSON.parse(text).usage;
    if (caller === "openai") expect(usage.prompt_tokens).toBe(PROMPT_TOKENS);
    else expect(usage).toMatchObject(USAGE);
  });

  test(`stream to an ${caller} caller: message_start's writes, repeated in message_delta, charged once at the write prices`, async () => {
    upstream.setBehavior({
      script: () =>
        editedAnthropicStream((data) => {
          if (data.type === "message_start") data.message.usage = { ...USAGE, output_tokens: 1 };
          if (data.type === "message_delta") data.usage = USAGE;
        }),
    });
    const { row } = await charged(caller, WRITE_PRICED, true);
    expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 30, cost_micros: COST });
  });
}

test("stream whose message_delta gives only output_tokens: message_start's writes are charged", async () => {
  upstream.setBehavior({
    script: () =>
      editedAnthropicStream((data) => {
        if (data.type === "message_start") data.message.usage = { ...USAGE, output_tokens: 1 };
        if (data.type === "message_delta") data.usage = { output_tokens: 30 };
      }),
  });
  const { row } = await charged("anthropic", WRITE_PRICED, true);
  expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 30, cost_micros: COST });
});

test("stream broken off before message_delta: the prompt as message_start counted it, writes at the write prices", async () => {
  upstream.setBehavior({
    script: () => editedAnthropicStream((data) => data.type === "message_start" && (data.message.usage = { ...USAGE, output_tokens: 1 }), { cutBefore: "message_delta" }),
  });
  const { id, key } = await newAccount(gw, START);
  const response = await ask("anthropic", key, WRITE_PRICED, true);
  await response.text();
  const [row] = await usageRows(gw, id);
  const streamed = estimate(summarizeAnthropicStream(ANTHROPIC_STREAM_FIXTURE).text);
  expect(row).toMatchObject({ status: 502, prompt_tokens: PROMPT_TOKENS, completion_tokens: streamed, cost_micros: COST - 450 + streamed * 15 });
  await expectBooksBalanced(gw);
});

test("an answer without cache_creation: all of cache_creation_input_tokens are 5-minute writes", async () => {
  const { cache_creation: _, ...older } = USAGE;
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: older } });
  const { row } = await charged("anthropic", WRITE_PRICED, false);
  expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, cost_micros: 150 + 1000 + 2000 * 3.75 + 450 });
});

test("a model with only a 5-minute write price: 1-hour writes are charged at it", async () => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { row } = await charged("anthropic", WRITE_5M_ONLY, false);
  expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, cost_micros: 150 + 1000 + 2000 * 3.75 + 450 });
});

test("a model without write prices: writes are charged at the input price", async () => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { row } = await charged("anthropic", UNPRICED_WRITES, false);
  expect(row).toMatchObject({ prompt_tokens: PROMPT_TOKENS, cost_micros: 150 + 1000 + 2000 * 3 + 450 });
});

/** The hold of one request of `model`: its prompt's estimate at `perToken`, max_tokens of output at 15. */
const holdAt = (perToken: number) => estimate(PROMPT) * perToken + MAX_TOKENS * 15;

test.each([
  [WRITE_PRICED, 6],
  [WRITE_5M_ONLY, 3.75],
  [UNPRICED_WRITES, 3],
])("the hold of %s prices the prompt at the dearest of its input and write prices (%d a token)", async (model, perToken) => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { key } = await newAccount(gw, START);
  const response = await ask("anthropic", key, model, false);
  expect(response.status).toBe(200);
  const [hold] = await ledgerOf(gw, response.headers.get("x-request-id")!);
  expect(hold).toMatchObject({ kind: "hold", amount_micros: -Math.round(holdAt(perToken)) });
  await expectBooksBalanced(gw);
});

test("a balance one micro-USD short of that hold gets 402 before any upstream call", async () => {
  const { id, key } = await newAccount(gw, Math.round(holdAt(6)) - 1);
  upstream.reset();
  const response = await ask("anthropic", key, WRITE_PRICED, false);
  expect(response.status).toBe(402);
  expect(upstream.requests).toHaveLength(0);
  expect((await account(gw, id)).total_spent_micros).toBe(0);
  await expectBooksBalanced(gw);
});
