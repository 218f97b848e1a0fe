import type { Price, TokenPriceField } from "./price.ts";

/** The cache prices: each a fixed multiple of the input price, at either length, on both providers' lists. */
const CACHE_PRICE_FIELDS = ["cachedInputPerMillion", "cacheWritePerMillion", "cacheWrite1hPerMillion"] as const satisfies readonly TokenPriceField[];

/**
 * The price of a request whose prompt is above the tier's threshold: the tier's token prices
 * in place of the standard ones, and no tier of its own. A tier price left null follows the
 * standard one: input and output unchanged, a cache price scaled by the tier's input price over
 * the standard input price (rounded up to the micro-USD). Both providers keep a cache price at
 * the same multiple of input in both tiers (Anthropic: "prompt caching multipliers apply on top
 * of long context pricing"; Google: 2.5 Pro's 0.125 and 0.25 USD against 1.25 and 2.50), so a
 * tier that names only input and output still charges a cache read or write what the provider
 * does, where the standard cache price would charge a long prompt's cache write less than its
 * uncached input. Made per request only for prompts above the threshold, which are rare.
 */
export function longPromptPrice(price: Price): Price {
  const tier = price.longPrompt!;
  const standardInput = price.inputPerMillion;
  const input = tier.inputPerMillion ?? standardInput;
  const long: Price = { ...price, longPrompt: null, inputPerMillion: input, outputPerMillion: tier.outputPerMillion ?? price.outputPerMillion };
  for (const field of CACHE_PRICE_FIELDS) {
    const standard = price[field];
    long[field] = tier[field] ?? (standard === null || !standardInput || input === null ? standard : Math.ceil((standard * input) / standardInput));
  }
  return long;
}
