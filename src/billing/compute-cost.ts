import type { Usage } from "../canonical/chat.ts";
import type { Price } from "../pricing/price.ts";

const TOKENS_PER_MILLION = 1_000_000;

/**
 * The cost of a chat request in micro-USD from its usage and the model's per-million-token
 * prices. Cached input tokens are billed at the cached rate when the model has one. One
 * rounding, to the nearest micro-USD, at the end: a millionth of a dollar is the smallest
 * amount the ledger holds, so nothing smaller is invented or lost along the way.
 */
export function computeChatCost(price: Price | undefined, usage: Usage): number {
  if (!price) return 0;
  const cached = price.cachedInputPerMillion === null ? 0 : Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const scaled =
    uncached * (price.inputPerMillion ?? 0) +
    cached * (price.cachedInputPerMillion ?? 0) +
    usage.outputTokens * (price.outputPerMillion ?? 0);
  return Math.round(scaled / TOKENS_PER_MILLION);
}
