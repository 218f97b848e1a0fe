import * as v from "valibot";
import type { PriceRow } from "../db/schema.ts";
import { microsToUsd } from "../lib/money.ts";
import { PRICED_IMAGE_QUALITIES } from "../canonical/media.ts";

/** Which endpoints a model serves (DESIGN.md section 5); models without a price are chat models. */
export const MODEL_MODES = ["chat", "embedding", "rerank", "image", "speech", "transcription"] as const;
export type ModelMode = (typeof MODEL_MODES)[number];
export const ModelModeSchema = v.picklist(MODEL_MODES, `must be one of ${MODEL_MODES.join(", ")}`);

/** The unit prices of one model, in integer micro-USD. */
export interface Price {
  model: string;
  mode: ModelMode;
  inputPerMillion: number | null;
  outputPerMillion: number | null;
  cachedInputPerMillion: number | null;
  /** Per 1M prompt tokens written to the cache for 5 minutes; null: at the input price. */
  cacheWritePerMillion: number | null;
  /** Per 1M prompt tokens written to the cache for 1 hour; null: at cacheWritePerMillion. */
  cacheWrite1hPerMillion: number | null;
  perImage: number | null;
  per1kCharacters: number | null;
  perMinute: number | null;
  per1kDocuments: number | null;
  /** Per 1,000 rerank searches, Cohere's unit: a query with up to 100 documents (see rerank-search-units.ts). */
  per1kSearches: number | null;
  /** Per 1,000 searches the upstream's own web search tool runs (Anthropic's web_search). */
  per1kWebSearches: number | null;
  /**
   * Per-image prices by "<size>/<quality>" (e.g. "1792x1024/hd"); its sizes are the sizes the
   * model serves. Null: perImage for any size.
   */
  imagePrices: Readonly<Record<string, number>> | null;
  /** Token prices for prompts above a length (Gemini Pro's and Claude Sonnet 4's past 200k tokens); null: one rate for any length. */
  longPrompt: LongPromptTier | null;
}

/** The Price fields of token prices: those a long-prompt tier sets again. */
const TOKEN_PRICE_FIELDS = ["inputPerMillion", "outputPerMillion", "cachedInputPerMillion", "cacheWritePerMillion", "cacheWrite1hPerMillion"] as const;
export type TokenPriceField = (typeof TOKEN_PRICE_FIELDS)[number];

/**
 * The token prices of a request whose prompt (every prompt token the upstream counts, cached
 * and written ones included) is above `aboveTokens`: they apply to all of its tokens, output
 * included, as Google and Anthropic bill. A price left null follows its standard one (see
 * long-prompt-price.ts).
 */
export type LongPromptTier = { aboveTokens: number } & Record<TokenPriceField, number | null>;

/** "<width>x<height>" with sides of at most 4 digits: no image model makes 10,000 pixels a side. */
const SIZE_PATTERN = "[1-9]\\d{0,3}x[1-9]\\d{0,3}";

/** What an image size looks like, in a request and in a price key. */
export const IMAGE_SIZE = new RegExp(`^${SIZE_PATTERN}$`);

/** What an image price key looks like: a size and a quality, DALL-E's or GPT image models'. */
export const IMAGE_PRICE_KEY = new RegExp(`^${SIZE_PATTERN}/(${PRICED_IMAGE_QUALITIES.join("|")})$`);

/** The key of an image price: "<width>x<height>/<quality>". */
export const imagePriceKey = (size: string, quality: string) => `${size}/${quality}`;

/** API field name (USD) -> Price field -> prices column (both micro-USD): one list serves parsing, storing and showing. */
export const PRICE_FIELDS = [
  ["input_per_million", "inputPerMillion", "input_per_million_micros"],
  ["output_per_million", "outputPerMillion", "output_per_million_micros"],
  ["cached_input_per_million", "cachedInputPerMillion", "cached_input_per_million_micros"],
  ["cache_write_per_million", "cacheWritePerMillion", "cache_write_per_million_micros"],
  ["cache_write_1h_per_million", "cacheWrite1hPerMillion", "cache_write_1h_per_million_micros"],
  ["per_image", "perImage", "per_image_micros"],
  ["per_1k_characters", "per1kCharacters", "per_1k_characters_micros"],
  ["per_minute", "perMinute", "per_minute_micros"],
  ["per_1k_documents", "per1kDocuments", "per_1k_documents_micros"],
  ["per_1k_searches", "per1kSearches", "per_1k_searches_micros"],
  ["per_1k_web_searches", "per1kWebSearches", "per_1k_web_searches_micros"],
] as const;

type PriceFieldEntry = (typeof PRICE_FIELDS)[number];

/** The entries of PRICE_FIELDS a long-prompt tier takes: its prices have the standard ones' names. */
export const LONG_PROMPT_FIELDS = PRICE_FIELDS.filter((entry): entry is Extract<PriceFieldEntry, readonly [string, TokenPriceField, string]> =>
  (TOKEN_PRICE_FIELDS as readonly string[]).includes(entry[1]),
);

/** Parses a stored row. */
export function priceFromRow(row: PriceRow): Price {
  const imagePrices = row.image_prices_json === null ? null : (JSON.parse(row.image_prices_json) as Record<string, number>);
  const longPrompt = row.long_prompt_json === null ? null : (JSON.parse(row.long_prompt_json) as LongPromptTier);
  const price = { model: row.model, mode: row.mode as ModelMode, imagePrices, longPrompt } as Price;
  for (const [, field, column] of PRICE_FIELDS) price[field] = row[column];
  return price;
}

/** The row that stores a price. */
export function priceToRow(price: Price, updatedAt: number): PriceRow {
  const imagePricesJson = price.imagePrices === null ? null : JSON.stringify(price.imagePrices);
  const longPromptJson = price.longPrompt === null ? null : JSON.stringify(price.longPrompt);
  const row = { model: price.model, mode: price.mode, image_prices_json: imagePricesJson, long_prompt_json: longPromptJson, updated_at: updatedAt } as PriceRow;
  for (const [, field, column] of PRICE_FIELDS) row[column] = price[field];
  return row;
}

type PriceViewValue = string | number | null | Record<string, number | null>;

/** `fields` of `prices` by their API names, in USD. */
function usdFields(prices: Partial<Record<PriceFieldEntry[1], number | null>>, fields: readonly PriceFieldEntry[]): Record<string, number | null> {
  const view: Record<string, number | null> = {};
  for (const [name, field] of fields) {
    const micros = prices[field] ?? null;
    view[name] = micros === null ? null : microsToUsd(micros);
  }
  return view;
}

/** The price record as the API shows it: USD numbers. */
export function priceView(price: Price) {
  const view: Record<string, PriceViewValue> = { model: price.model, mode: price.mode, ...usdFields(price, PRICE_FIELDS) };
  view.image_prices = price.imagePrices === null
    ? null
    : Object.fromEntries(Object.entries(price.imagePrices).map(([key, micros]) => [key, microsToUsd(micros)]));
  view.long_prompt = price.longPrompt === null ? null : { above_tokens: price.longPrompt.aboveTokens, ...usdFields(price.longPrompt, LONG_PROMPT_FIELDS) };
  return view;
}
