/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and their variants) refuse `max_tokens`
 * ("Use 'max_completion_tokens' instead") and any temperature but 1; every other OpenAI model
 * takes either name of the limit, but OpenAI-compatible servers (Mistral, DeepSeek, Ollama,
 * vLLM's older releases) know only `max_tokens`. A model ID with a vendor prefix
 * ("openai/gpt-5") is a router's, which takes `max_tokens` for every model.
 */
const REASONING_MODEL = /^(o[1-9]|gpt-5)(?![0-9a-z])/i;

export const isOpenAiReasoningModel = (upstreamModel: string) => REASONING_MODEL.test(upstreamModel);

/** The field a translated request names its output limit with, for `upstreamModel`. */
export function tokenLimitField(upstreamModel: string): "max_tokens" | "max_completion_tokens" {
  return isOpenAiReasoningModel(upstreamModel) ? "max_completion_tokens" : "max_tokens";
}

/** Both names of the limit: a same-format caller's body says which of them it used. */
export const TOKEN_LIMIT_FIELDS = ["max_tokens", "max_completion_tokens"] as const;
