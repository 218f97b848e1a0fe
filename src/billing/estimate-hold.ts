import type { ChatRequest } from "../canonical/chat.ts";
import { estimatePromptTokens } from "../canonical/estimate-prompt-tokens.ts";
import type { Price } from "../pricing/price.ts";
import { computeChatCost } from "./compute-cost.ts";

/** Output tokens a hold assumes when the request sets no maximum. */
export const HOLD_OUTPUT_TOKENS_WITHOUT_MAX = 4096;

/**
 * The most a chat request is expected to cost: its estimated prompt plus its max_tokens of
 * output, at the model's prices. Held before the upstream call; a request can cost more only
 * when the upstream counts more prompt tokens than estimated, or (without max_tokens) writes
 * more than HOLD_OUTPUT_TOKENS_WITHOUT_MAX tokens. That excess is the documented overdraft.
 */
export function estimateChatHold(price: Price | undefined, request: ChatRequest): number {
  if (!price) return 0;
  return computeChatCost(price, {
    inputTokens: estimatePromptTokens(request),
    outputTokens: request.params.maxTokens ?? HOLD_OUTPUT_TOKENS_WITHOUT_MAX,
  });
}
