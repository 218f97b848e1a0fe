import { PRICE_FIELDS, type LongPromptTier, type ModelMode, type Price } from "./price.ts";

type PriceSpec = Partial<Omit<Price, "model" | "mode">>;

/** USD to micro-USD for table entries written in dollars, so the table reads like a price list. */
const usd = (dollars: number) => Math.round(dollars * 1_000_000);

function entry(model: string, mode: ModelMode, spec: PriceSpec): Price {
  const price = { model, mode, imagePrices: spec.imagePrices ?? null, longPrompt: spec.longPrompt ?? null } as Price;
  for (const [, field] of PRICE_FIELDS) price[field] = spec[field] ?? null;
  return price;
}

/** A chat model's token prices, USD per 1M tokens. */
const tokens = (input: number, output: number, cached?: number): PriceSpec => ({
  inputPerMillion: usd(input),
  outputPerMillion: usd(output),
  cachedInputPerMillion: cached === undefined ? undefined : usd(cached),
});

const chat = (model: string, input: number, output: number, cached?: number) => entry(model, "chat", tokens(input, output, cached));

/** Anthropic's price of its web search tool, USD per 1,000 searches, the same for every Claude model. */
const CLAUDE_WEB_SEARCHES_PER_1K = 10;

/** A Claude model, USD per 1M tokens: input, output, cache read, and cache writes of 5 minutes and of 1 hour. */
const claude = (model: string, input: number, output: number, cached: number, write5m: number, write1h: number) =>
  entry(model, "chat", {
    ...tokens(input, output, cached),
    cacheWritePerMillion: usd(write5m),
    cacheWrite1hPerMillion: usd(write1h),
    per1kWebSearches: usd(CLAUDE_WEB_SEARCHES_PER_1K),
  });

/**
 * The token prices of prompts above 200k tokens, USD per 1M tokens: input, output, cache read,
 * and the cache writes of 5 minutes and 1 hour where the provider prices them.
 */
const above200k = (input: number, output: number, cached: number, write5m?: number, write1h?: number): LongPromptTier => ({
  aboveTokens: 200_000,
  inputPerMillion: usd(input),
  outputPerMillion: usd(output),
  cachedInputPerMillion: usd(cached),
  cacheWritePerMillion: write5m === undefined ? null : usd(write5m),
  cacheWrite1hPerMillion: write1h === undefined ? null : usd(write1h),
});

/** `price` with a long-prompt tier. */
const withLongPrompt = (price: Price, longPrompt: LongPromptTier): Price => ({ ...price, longPrompt });

/**
 * Claude Sonnet 4 and 4.5 with the 1M-token context window: a request of more than 200k input
 * tokens (cache reads and writes included) is billed at 6 and 22.50 USD, the cache at the usual
 * multiples of that input price (0.1x read, 1.25x and 2x writes). Sonnet 4.6 and later bill the
 * whole window at standard prices. platform.claude.com/docs/en/about-claude/pricing, "Long
 * context pricing"; a request that long is refused unless the window is on, so one counted that
 * long was billed so.
 */
const SONNET_4_LONG_PROMPT = above200k(6, 22.5, 0.6, 7.5, 12);

/** DALL-E 3's list prices by size and quality; the demo image model mirrors them. */
const DALL_E_3_SIZES = {
  "1024x1024/standard": usd(0.04),
  "1024x1792/standard": usd(0.08),
  "1792x1024/standard": usd(0.08),
  "1024x1024/hd": usd(0.08),
  "1024x1792/hd": usd(0.12),
  "1792x1024/hd": usd(0.12),
};

/**
 * Prices that ship inside the executable: the demo models and common public model IDs,
 * from the providers' published list prices (USD). Admin-set prices override them.
 */
export const DEFAULT_PRICES: readonly Price[] = [
  chat("demo-chat", 0.5, 1.5),
  chat("demo-chat-mini", 0.1, 0.3),
  entry("demo-embed", "embedding", { inputPerMillion: usd(0.02) }),
  entry("demo-rerank", "rerank", { per1kDocuments: usd(0.05) }),
  entry("demo-image", "image", { perImage: usd(0.04), imagePrices: DALL_E_3_SIZES }),
  entry("demo-tts", "speech", { per1kCharacters: usd(0.015) }),
  entry("demo-transcribe", "transcription", { perMinute: usd(0.006) }),
  chat("gpt-4o", 2.5, 10, 1.25),
  chat("gpt-4o-mini", 0.15, 0.6, 0.075),
  chat("gpt-4.1", 2, 8, 0.5),
  chat("gpt-4.1-mini", 0.4, 1.6, 0.1),
  chat("gpt-4.1-nano", 0.1, 0.4, 0.025),
  chat("o3-mini", 1.1, 4.4, 0.55),
  chat("o4-mini", 1.1, 4.4, 0.275),
  // developers.openai.com/api/docs/models/<id>.
  chat("gpt-5-mini", 0.25, 2, 0.025),
  chat("gpt-5-nano", 0.05, 0.4, 0.005),
  claude("claude-3-5-haiku-latest", 0.8, 4, 0.08, 1, 1.6),
  withLongPrompt(claude("claude-sonnet-4-20250514", 3, 15, 0.3, 3.75, 6), SONNET_4_LONG_PROMPT),
  claude("claude-opus-4-20250514", 15, 75, 1.5, 18.75, 30),
  // platform.claude.com/docs/en/about-claude/pricing and each model's overview page. Claude Code
  // sends a dated ID or its undated alias, so both are priced.
  ...["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"].map((id) => withLongPrompt(claude(id, 3, 15, 0.3, 3.75, 6), SONNET_4_LONG_PROMPT)),
  claude("claude-sonnet-4-6", 3, 15, 0.3, 3.75, 6),
  ...["claude-haiku-4-5-20251001", "claude-haiku-4-5"].map((id) => claude(id, 1, 5, 0.1, 1.25, 2)),
  ...["claude-opus-4-5-20251101", "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5"].map((id) => claude(id, 5, 25, 0.5, 6.25, 10)),
  claude("claude-sonnet-5", 2, 10, 0.2, 2.5, 4),
  claude("claude-opus-5-5", 4, 20, 0.2, 5, 8),
  // ai.google.dev/gemini-api/docs/pricing, paid tier, text input; the cached price is the context
  // cache's read price. The pro models charge every token of a prompt above 200k tokens (its
  // promptTokenCount, cached tokens included) at their second price. Left unpriced:
  // gemini-3.5-flash, priced only on third-party pages.
  chat("gemini-2.0-flash", 0.1, 0.4, 0.025),
  chat("gemini-2.5-flash", 0.3, 2.5, 0.03),
  withLongPrompt(chat("gemini-2.5-pro", 1.25, 10, 0.125), above200k(2.5, 15, 0.25)),
  ...["gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools"].map((id) => withLongPrompt(chat(id, 2, 12, 0.2), above200k(4, 18, 0.4))),
  // Gemini CLI's router and the flash models it routes to.
  chat("gemini-2.5-flash-lite", 0.1, 0.4, 0.01),
  chat("gemini-3.1-flash-lite", 0.25, 1.5, 0.025),
  chat("gemini-3-flash-preview", 0.5, 3, 0.05),
  chat("deepseek-chat", 0.27, 1.1, 0.07),
  entry("text-embedding-3-small", "embedding", { inputPerMillion: usd(0.02) }),
  entry("text-embedding-3-large", "embedding", { inputPerMillion: usd(0.13) }),
  entry("text-embedding-004", "embedding", { inputPerMillion: usd(0.0) }),
  // Cohere bills its rerank models by the search: 2 USD per 1,000.
  entry("rerank-v3.5", "rerank", { per1kSearches: usd(2) }),
  entry("dall-e-2", "image", {
    perImage: usd(0.02),
    imagePrices: { "256x256/standard": usd(0.016), "512x512/standard": usd(0.018), "1024x1024/standard": usd(0.02) },
  }),
  entry("dall-e-3", "image", { perImage: usd(0.04), imagePrices: DALL_E_3_SIZES }),
  // gpt-image-1's own qualities, and the spec's standard and hd as its medium and high.
  entry("gpt-image-1", "image", {
    perImage: usd(0.042),
    imagePrices: {
      "1024x1024/low": usd(0.011),
      "1024x1536/low": usd(0.016),
      "1536x1024/low": usd(0.016),
      "1024x1024/medium": usd(0.042),
      "1024x1536/medium": usd(0.063),
      "1536x1024/medium": usd(0.063),
      "1024x1024/high": usd(0.167),
      "1024x1536/high": usd(0.25),
      "1536x1024/high": usd(0.25),
      "1024x1024/standard": usd(0.042),
      "1024x1536/standard": usd(0.063),
      "1536x1024/standard": usd(0.063),
      "1024x1024/hd": usd(0.167),
      "1024x1536/hd": usd(0.25),
      "1536x1024/hd": usd(0.25),
    },
  }),
  entry("tts-1", "speech", { per1kCharacters: usd(0.015) }),
  entry("tts-1-hd", "speech", { per1kCharacters: usd(0.03) }),
  entry("whisper-1", "transcription", { perMinute: usd(0.006) }),
];
