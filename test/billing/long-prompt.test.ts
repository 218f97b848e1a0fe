import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE, startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { GEMINI_PLAIN_FIXTURE, startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { account, chat, expectBooksBalanced, newAccount, usageRows } from "./_inprocess.ts";
import { estimate } from "./_support.ts";

/**
 * A prompt above a price's long-prompt threshold puts every token of the request at the tier's
 * prices, output and cache included, as Google and Anthropic bill; one at the threshold or
 * below is charged the standard prices. The prompt is what the provider counts: Gemini's
 * promptTokenCount (cached tokens included), Anthropic's input_tokens plus its cache reads and
 * writes. The hold of a model with a tier is at the tier's prices, whatever the estimate.
 * Prices are USD per 1M tokens, so micro-USD per token.
 */

const GEMINI = "long-prompt-gemini";
const CLAUDE = "long-prompt-claude";
const CLAUDE_IO_TIER = "long-prompt-claude-io";
const ABOVE = 200_000;
const START = 1_000_000_000;

/** Gemini 2.5 Pro's prices. */
const GEMINI_PRICE = {
  model: GEMINI,
  input_per_million: 1.25,
  output_per_million: 10,
  cached_input_per_million: 0.125,
  long_prompt: { above_tokens: ABOVE, input_per_million: 2.5, output_per_million: 15, cached_input_per_million: 0.25 },
};
/** Claude Sonnet 4's prices with the 1M-token window. */
const CLAUDE_STANDARD = { input_per_million: 3, output_per_million: 15, cached_input_per_million: 0.3, cache_write_per_million: 3.75, cache_write_1h_per_million: 6 };
const CLAUDE_PRICE = {
  model: CLAUDE,
  ...CLAUDE_STANDARD,
  long_prompt: { above_tokens: ABOVE, input_per_million: 6, output_per_million: 22.5, cached_input_per_million: 0.6, cache_write_per_million: 7.5, cache_write_1h_per_million: 12 },
};
/** The same, its tier naming input and output only: its cache prices are the standard ones at the tier's multiple of input. */
const CLAUDE_IO_TIER_PRICE = { model: CLAUDE_IO_TIER, ...CLAUDE_STANDARD, long_prompt: { above_tokens: ABOVE, input_per_million: 6, output_per_million: 22.5 } };

let gw: TestGateway;
let gemini: GeminiUpstream;
let anthropic: AnthropicUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  [gemini, anthropic] = await Promise.all([startGeminiUpstream(), startAnthropicUpstream()]);
  const channels = [
    { name: "gemini", type: "gemini", base_url: gemini.url, api_key: "k", models: [GEMINI] },
    { name: "anthropic", type: "anthropic", base_url: anthropic.url, api_key: "k", models: [CLAUDE, CLAUDE_IO_TIER] },
  ];
  for (const channel of channels) expect((await gw.admin("POST", "/v1/admin/channels", channel)).status).toBe(201);
  for (const price of [GEMINI_PRICE, CLAUDE_PRICE, CLAUDE_IO_TIER_PRICE]) expect((await gw.admin("POST", "/v1/admin/prices", price)).status).toBe(200);
});

afterAll(async () => {
  await gw.close();
  await Promise.all([gemini.close(), anthropic.close()]);
});

const PROMPT = "Summarize the attached documents.";
const MAX_TOKENS = 2_000;

/** The usage row of one request of `model` on a new account, once the books balance and the account was charged its cost. */
async function charged(model: string): Promise<number> {
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, { model, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: PROMPT }] });
  expect({ status: response.status, body: await response.text() }).toMatchObject({ status: 200 });
  const [row] = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  expect((await account(gw, id)).total_spent_micros).toBe(row!.cost_micros);
  return row!.cost_micros;
}

describe("Gemini: promptTokenCount, cached tokens included, decides", () => {
  /** A prompt of `prompt` tokens, 50,000 of them cached, and 1,000 output tokens (600 of them thinking). */
  const usage = (prompt: number) => ({ promptTokenCount: prompt, cachedContentTokenCount: 50_000, candidatesTokenCount: 400, thoughtsTokenCount: 600, totalTokenCount: prompt + 1_000 });

  for (const [label, prompt, micros] of [
    // 149,999 x 1.25 + 50,000 x 0.125 + 1,000 x 10 = 203,748.75
    ["below the threshold: standard prices", ABOVE - 1, 203_749],
    // 150,000 x 1.25 + 50,000 x 0.125 + 1,000 x 10
    ["at the threshold: standard prices", ABOVE, 203_750],
    // 150,001 x 2.5 + 50,000 x 0.25 + 1,000 x 15 = 402,502.5, rounded once to the nearest micro-USD
    ["one token above: every token at the tier's prices, output and cached ones too", ABOVE + 1, 402_503],
  ] as const) {
    test(`${label}: ${micros} micro-USD`, async () => {
      gemini.setBehavior({ response: { ...jsonFixture(GEMINI_PLAIN_FIXTURE), usageMetadata: usage(prompt) } });
      expect(await charged(GEMINI)).toBe(micros);
    });
  }
});

describe("Anthropic: input_tokens plus cache reads and writes decide", () => {
  /** `uncached` input tokens, 100,000 read from the cache, 30,000 written for 5 minutes and 20,000 for an hour, 1,000 out. */
  const usage = (uncached: number) => ({
    input_tokens: uncached,
    cache_read_input_tokens: 100_000,
    cache_creation_input_tokens: 50_000,
    cache_creation: { ephemeral_5m_input_tokens: 30_000, ephemeral_1h_input_tokens: 20_000 },
    output_tokens: 1_000,
  });
  /** 50,001 uncached: above the threshold only with the cache's 150,000 counted. */
  const LONG = 50_001 * 6 + 100_000 * 0.6 + 30_000 * 7.5 + 20_000 * 12 + 1_000 * 22.5;

  for (const [label, model, uncached, micros] of [
    // 49,999 x 3 + 100,000 x 0.3 + 30,000 x 3.75 + 20,000 x 6 + 1,000 x 15
    ["below the threshold: standard prices", CLAUDE, 49_999, 427_497],
    ["at the threshold: standard prices", CLAUDE, 50_000, 427_500],
    ["one token above, counting the cache: every token at the tier's prices", CLAUDE, 50_001, LONG],
    ["one token above, a tier of input and output only: its cache prices at the tier's multiple of input", CLAUDE_IO_TIER, 50_001, LONG],
  ] as const) {
    test(`${label}: ${micros} micro-USD`, async () => {
      anthropic.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: usage(uncached) } });
      expect(await charged(model)).toBe(micros);
    });
  }
});

describe("the hold of a model with a tier", () => {
  /** The hold at the tier's prices: the prompt at its dearest (the 1-hour write) and MAX_TOKENS of output. */
  const held = (prompt: string) => estimate(prompt) * 12 + MAX_TOKENS * 22.5;

  for (const [label, prompt] of [
    ["a prompt estimated above the threshold", "x".repeat(4 * (ABOVE + 10))],
    ["a short prompt, which the upstream may still count above it", PROMPT],
  ] as const) {
    test(`${label} is held at the tier's prices: one micro-USD short is a 402, enough is served`, async () => {
      anthropic.setBehavior({ message: jsonFixture(ANTHROPIC_PLAIN_FIXTURE) });
      const body = { model: CLAUDE, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: prompt }] };
      const short = await newAccount(gw, held(prompt) - 1);
      const refused = await chat(gw, short.key, body);
      expect({ status: refused.status, type: (await refused.json()).error?.type }).toEqual({ status: 402, type: "insufficient_funds" });
      const enough = await newAccount(gw, held(prompt));
      const served = await chat(gw, enough.key, body);
      expect({ status: served.status, body: await served.text() }).toMatchObject({ status: 200 });
      await usageRows(gw, enough.id);
      await expectBooksBalanced(gw);
    });
  }
});
