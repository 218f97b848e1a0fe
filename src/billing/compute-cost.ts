import type { Usage } from "../canonical/chat.ts";
import { imagePriceKey, type Price } from "../pricing/price.ts";
import { longPromptPrice } from "../pricing/long-prompt-price.ts";

/**
 * What a request used, in every unit a price can name. Chat and embeddings fill the token
 * counts; the other endpoints add their own unit.
 */
export interface BillableUsage extends Usage {
  /** Images generated, all of one size and quality. */
  images?: { count: number; size: string; quality: string };
  /** Characters of text spoken (speech). */
  characters?: number;
  /** Seconds of audio heard (transcription, translation). */
  audioSeconds?: number;
  /** Documents ranked (rerank). */
  documents?: number;
  /** Rerank searches: a query with up to 100 documents (Cohere's billing unit). */
  searches?: number;
}

/** The per-image price for a size and quality: the size table's entry, else the flat price. */
export function perImagePrice(price: Price, size: string, quality: string): number | null {
  return price.imagePrices?.[imagePriceKey(size, quality)] ?? price.perImage;
}

/**
 * The cost of a request in micro-USD from its usage and the model's unit prices. Cached input
 * tokens are billed at the cached rate when the model has one, tokens written to the prompt
 * cache at the write rate of their lifetime (cacheWritePrices). A prompt above the model's
 * long-prompt threshold puts every token of the request at the tier's prices (pricedFor).
 * Every unit is scaled to one
 * common denominator and rounded once, to the nearest micro-USD, at the end: a millionth of a
 * dollar is the smallest amount the ledger holds, so nothing smaller is invented or lost on
 * the way.
 */
export function computeCost(price: Price | undefined, usage: BillableUsage): number {
  return roundedCost(scaledCost(price, usage));
}

/**
 * The hold for a request's most expected usage: its cost, or Infinity when that sum is past
 * the largest number (a max_tokens of 1e308), which no balance covers. As a cost it reads 0,
 * and a hold of 0 is no hold at all: such a request was served on any balance. Its prompt is
 * held at the dearest of the input and cache-write prices: whether the upstream writes the
 * prompt to its cache, and for how long, is known only from its answer.
 *
 * A model with a long-prompt tier is held at the dearer of its two sets of prices whatever the
 * prompt's estimate. The estimate (4 characters a token) can fall short by any factor (text
 * of a few characters a token, images, the prompts of Gemini's own tools it cannot see), and
 * a prompt counted past the threshold reprices every token of the request, not only the
 * uncounted ones: held at standard prices, such a request would overdraw by the whole
 * difference, where the documented overdraft is the uncounted tokens alone. The cost is a
 * larger hold on short prompts of such models, released when the request settles.
 */
export function computeHold(price: Price | undefined, maxUsage: BillableUsage): number {
  if (!price) return 0;
  let scaled = scaledCost(promptAtDearest(price), maxUsage);
  if (price.longPrompt) scaled = Math.max(scaled, scaledCost(promptAtDearest(longPromptPrice(price)), maxUsage));
  return scaled === Infinity ? Infinity : roundedCost(scaled);
}

/** The prices of this usage: the long-prompt tier's when its prompt is above the tier's threshold. */
function pricedFor(price: Price, usage: BillableUsage): Price {
  // Both providers count the whole prompt, cached and written tokens included, as inputTokens does.
  return price.longPrompt && usage.inputTokens > price.longPrompt.aboveTokens ? longPromptPrice(price) : price;
}

/** `price` with its input at the dearest price a prompt token may be charged. */
function promptAtDearest(price: Price): Price {
  if (price.cacheWritePerMillion === null && price.cacheWrite1hPerMillion === null) return price;
  const { per5m, per1h } = cacheWritePrices(price);
  return { ...price, inputPerMillion: Math.max(price.inputPerMillion ?? 0, per5m, per1h) };
}

/**
 * The per-1M prices of a 5-minute and a 1-hour cache write. A 1-hour write without its own
 * price is at the 5-minute price, and a write without any at the input price: a model whose
 * provider charges more for writes needs its write prices set, or the difference is lost.
 */
function cacheWritePrices(price: Price): { per5m: number; per1h: number } {
  const per5m = price.cacheWritePerMillion ?? price.inputPerMillion ?? 0;
  return { per5m, per1h: price.cacheWrite1hPerMillion ?? per5m };
}

/** The scaled cost of `uncached` prompt tokens of which the usage says some were written to the cache (at most all of them). */
function withCacheWrites(price: Price, usage: BillableUsage, uncached: number): number {
  const written5m = Math.min(usage.cacheWrite5mTokens ?? 0, uncached);
  const written1h = Math.min(usage.cacheWrite1hTokens ?? 0, uncached - written5m);
  const { per5m, per1h } = cacheWritePrices(price);
  return (uncached - written5m - written1h) * (price.inputPerMillion ?? 0) + written5m * per5m + written1h * per1h;
}

/** The cost in millionths of a micro-USD, unrounded. */
function scaledCost(model: Price | undefined, usage: BillableUsage): number {
  if (!model) return 0;
  const price = pricedFor(model, usage);
  const cached = price.cachedInputPerMillion === null ? 0 : Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  // Most prompts write nothing to the cache: for them the split by write price is skipped.
  const written = usage.cacheWrite5mTokens || usage.cacheWrite1hTokens;
  // Per million tokens, per thousand characters, documents or searches, per minute: all brought to
  // millionths so one division (and one rounding) ends the sum.
  let scaled =
    (written ? withCacheWrites(price, usage, uncached) : uncached * (price.inputPerMillion ?? 0)) +
    cached * (price.cachedInputPerMillion ?? 0) +
    usage.outputTokens * (price.outputPerMillion ?? 0);
  if (usage.characters) scaled += usage.characters * (price.per1kCharacters ?? 0) * 1_000;
  if (usage.documents) scaled += usage.documents * (price.per1kDocuments ?? 0) * 1_000;
  if (usage.searches) scaled += usage.searches * (price.per1kSearches ?? 0) * 1_000;
  if (usage.webSearches) scaled += usage.webSearches * (price.per1kWebSearches ?? 0) * 1_000;
  if (usage.audioSeconds) scaled += (usage.audioSeconds * (price.perMinute ?? 0) * 1_000_000) / 60;
  if (usage.images) scaled += usage.images.count * (perImagePrice(price, usage.images.size, usage.images.quality) ?? 0) * 1_000_000;
  return scaled;
}

/** Millionths of a micro-USD rounded to micro-USD. Counts are checked where upstreams report them; a charge is still never a credit. */
function roundedCost(scaled: number): number {
  return Number.isFinite(scaled) && scaled > 0 ? Math.round(scaled / 1_000_000) : 0;
}
