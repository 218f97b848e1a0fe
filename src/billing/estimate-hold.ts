import type { ChatRequest, Usage } from "../canonical/chat.ts";
import { estimatePromptTokens } from "../canonical/estimate-prompt-tokens.ts";

/** Output tokens assumed when a request sets no maximum. */
export const OUTPUT_TOKENS_WITHOUT_MAX = 4096;

/**
 * Web searches assumed when a request's web search tool sets no max_uses: the iterations
 * Anthropic's server-side tool loop runs before it pauses the turn (stop_reason pause_turn).
 */
export const WEB_SEARCHES_WITHOUT_MAX = 10;

/**
 * The most a chat request is expected to use: its estimated prompt plus its max_tokens of
 * output for each answer it asks for (OpenAI's n, Gemini's candidateCount), and the web
 * searches its server-side search tool may run. Priced, it is the hold taken before the
 * upstream call; counted, the tokens-per-minute reservation. A request can cost more only when
 * the upstream counts more prompt tokens than estimated, or (without max_tokens) writes more
 * than OUTPUT_TOKENS_WITHOUT_MAX tokens an answer, or (without max_uses) searches more than
 * WEB_SEARCHES_WITHOUT_MAX times: that excess is the documented overdraft.
 */
export function estimateMaxUsage(request: ChatRequest): Usage {
  const perAnswer = request.params.maxTokens ?? OUTPUT_TOKENS_WITHOUT_MAX;
  const usage = { inputTokens: estimatePromptTokens(request), outputTokens: perAnswer * (request.native?.answers ?? 1) };
  const webSearch = request.native?.webSearch;
  return webSearch ? { ...usage, webSearches: webSearch.maxUses ?? WEB_SEARCHES_WITHOUT_MAX } : usage;
}
