import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE, startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { GEMINI_PLAIN_FIXTURE, startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { bearer } from "../helpers/common.ts";
import { newAccount, onlyUsageRowOf } from "../billing/_inprocess.ts";

/**
 * The models the agent CLIs ask for are priced out of the box: a gateway that refuses unpriced
 * models, with no admin price set, serves each of them in its CLI's own format and charges the
 * provider's published list price for the counts the upstream reports. The prices are written
 * here again from the providers' pages (USD per 1M tokens), so an entry missing from the shipped
 * table is a 400 and a mistyped one a wrong charge.
 *
 * Each upstream reports 1,000,000 prompt tokens (200,000 of them read from the cache, and for
 * Anthropic 100,000 written for 5 minutes and 50,000 for an hour) and 100,000 output tokens, so
 * the charge in micro-USD is the price list's arithmetic. Such a prompt is above 200k tokens, so
 * the models with a long-prompt price (Claude Sonnet 4 and 4.5, the Gemini pro models) charge
 * every token at it.
 */

const START = 1_000_000_000;

/** OpenAI's counts: prompt_tokens includes the cached ones. */
const OPENAI_USAGE = { prompt_tokens: 1_000_000, completion_tokens: 100_000, total_tokens: 1_100_000, prompt_tokens_details: { cached_tokens: 200_000 } };
/** Gemini's counts: promptTokenCount includes cachedContentTokenCount. */
const GEMINI_USAGE = { promptTokenCount: 1_000_000, cachedContentTokenCount: 200_000, candidatesTokenCount: 100_000, totalTokenCount: 1_100_000 };
/** Anthropic's counts: input_tokens leaves out what was read from or written to the cache. */
const ANTHROPIC_USAGE = {
  input_tokens: 650_000,
  cache_read_input_tokens: 200_000,
  cache_creation_input_tokens: 150_000,
  cache_creation: { ephemeral_5m_input_tokens: 100_000, ephemeral_1h_input_tokens: 50_000 },
  output_tokens: 100_000,
};

/** USD per 1M tokens to the micro-USD of 800k uncached, 200k cached prompt tokens and 100k output. */
const tokenCharge = (input: number, output: number, cached = input) => Math.round((0.8 * input + 0.2 * cached + 0.1 * output) * 1_000_000);
/** The same for Anthropic's split: 650k uncached, 200k read, 100k written for 5 minutes, 50k for an hour. */
const claudeCharge = (input: number, output: number, read: number, write5m: number, write1h: number) =>
  Math.round((0.65 * input + 0.2 * read + 0.1 * write5m + 0.05 * write1h + 0.1 * output) * 1_000_000);

/** Codex CLI: Responses API on an openai channel. developers.openai.com/api/docs/models/<id>. */
const OPENAI_PRICES: Record<string, number> = {
  "gpt-5-mini": tokenCharge(0.25, 2, 0.025),
  "gpt-5-nano": tokenCharge(0.05, 0.4, 0.005),
};

/** Claude Code: Messages API on an anthropic channel, dated IDs and the undated aliases. platform.claude.com pricing. */
const SONNET_4 = claudeCharge(3, 15, 0.3, 3.75, 6);
/** Sonnet 4 and 4.5 above 200k input tokens: "Long context pricing", the cache at the usual multiples of its input. */
const SONNET_4_LONG = claudeCharge(6, 22.5, 0.6, 7.5, 12);
const OPUS_4_5 = claudeCharge(5, 25, 0.5, 6.25, 10);
const HAIKU_4_5 = claudeCharge(1, 5, 0.1, 1.25, 2);
const ANTHROPIC_PRICES: Record<string, number> = {
  "claude-sonnet-4-20250514": SONNET_4_LONG,
  "claude-sonnet-4-5-20250929": SONNET_4_LONG,
  "claude-sonnet-4-5": SONNET_4_LONG,
  "claude-sonnet-4-6": SONNET_4,
  "claude-haiku-4-5-20251001": HAIKU_4_5,
  "claude-haiku-4-5": HAIKU_4_5,
  "claude-opus-4-5-20251101": OPUS_4_5,
  "claude-opus-4-5": OPUS_4_5,
  "claude-opus-4-6": OPUS_4_5,
  "claude-opus-4-7": OPUS_4_5,
  "claude-opus-4-8": OPUS_4_5,
  "claude-opus-5": OPUS_4_5,
  "claude-sonnet-5": claudeCharge(2, 10, 0.2, 2.5, 4),
  "claude-opus-5-5": claudeCharge(4, 20, 0.2, 5, 8),
};

/** Gemini CLI: its router (flash-lite) and the models it routes to. ai.google.dev pricing, paid tier; the pro models' prices for prompts above 200k tokens. */
const GEMINI_PRICES: Record<string, number> = {
  "gemini-2.5-pro": tokenCharge(2.5, 15, 0.25),
  "gemini-3.1-pro-preview": tokenCharge(4, 18, 0.4),
  "gemini-3.1-pro-preview-customtools": tokenCharge(4, 18, 0.4),
  "gemini-2.5-flash": tokenCharge(0.3, 2.5, 0.03),
  "gemini-2.5-flash-lite": tokenCharge(0.1, 0.4, 0.01),
  "gemini-3.1-flash-lite": tokenCharge(0.25, 1.5, 0.025),
  "gemini-3-flash-preview": tokenCharge(0.5, 3, 0.05),
};

let gw: TestGateway;
let openai: OpenAiUpstream;
let anthropic: AnthropicUpstream;
let gemini: GeminiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  [openai, anthropic, gemini] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream(), startGeminiUpstream()]);
  openai.setBehavior({ completion: { ...jsonFixture("openai-chat-completion.json"), usage: OPENAI_USAGE } });
  anthropic.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: ANTHROPIC_USAGE } });
  gemini.setBehavior({ response: { ...jsonFixture(GEMINI_PLAIN_FIXTURE), usageMetadata: GEMINI_USAGE } });
  for (const [type, upstream, prices] of [
    ["openai", openai, OPENAI_PRICES],
    ["anthropic", anthropic, ANTHROPIC_PRICES],
    ["gemini", gemini, GEMINI_PRICES],
  ] as const) {
    const channel = { name: type, type, base_url: upstream.url, api_key: "k", models: Object.keys(prices) };
    expect((await gw.admin("POST", "/v1/admin/channels", channel)).status).toBe(201);
  }
});

afterAll(async () => {
  await gw.close();
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
});

/** A request for `model` as its CLI sends it: path and body. */
type CliRequest = (model: string) => [string, object];
const PROMPT = "Run echo hello in the shell";
const codex: CliRequest = (model) => ["/v1/responses", { model, input: PROMPT }];
const claudeCode: CliRequest = (model) => ["/v1/messages", { model, max_tokens: 1024, messages: [{ role: "user", content: PROMPT }] }];
const geminiCli: CliRequest = (model) => [`/v1beta/models/${model}:generateContent`, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] }];

for (const [cli, request, prices] of [
  ["Codex CLI", codex, OPENAI_PRICES],
  ["Claude Code", claudeCode, ANTHROPIC_PRICES],
  ["Gemini CLI", geminiCli, GEMINI_PRICES],
] as const) {
  describe(`${cli}'s models, priced out of the box`, () => {
    for (const [model, micros] of Object.entries(prices)) {
      test(`${model}: served and charged ${micros} micro-USD`, async () => {
        const { key } = await newAccount(gw, START);
        const [path, body] = request(model);
        const response = await gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
        expect({ status: response.status, body: await response.text() }).toMatchObject({ status: 200 });
        expect((await onlyUsageRowOf(gw, response)).cost_micros).toBe(micros);
      });
    }
  });
}
