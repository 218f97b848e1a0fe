import type { ChatRequest, Usage } from "../canonical/chat.ts";
import { estimatePromptTokens } from "../canonical/estimate-prompt-tokens.ts";

/** Output tokens assumed when a request sets no maximum. */
export const OUTPUT_TOKENS_WITHOUT_MAX = 4096;

/**
 * The most a chat request is expected to use: its estimated prompt plus its max_tokens of
 * output for each answer it asks for (OpenAI's n, Gemini's candidateCount). Priced, it is the
 * hold taken before the upstream call; counted, the tokens-per-minute reservation. A request
 * can cost more only when the upstream counts more prompt tokens than estimated, or (without
 * max_tokens) writes more than OUTPUT_TOKENS_WITHOUT_MAX tokens an answer: that excess is the
 * documented overdraft.
 */
export function estimateMaxUsage(request: ChatRequest): Usage {
  const perAnswer = request.params.maxTokens ?? OUTPUT_TOKENS_WITHOUT_MAX;
  return { inputTokens: estimatePromptTokens(request), outputTokens: perAnswer * (request.native?.answers ?? 1) };
}
