import type { WireFormat } from "../canonical/chat.ts";
import type { UpstreamError } from "./upstream-error.ts";

/**
 * Anthropic's messages (invalid_request_error): a model without extended thinking (Claude 3.5);
 * one that thinks only with a budget, sent adaptive thinking (Claude 4.5 and before); one
 * without the effort parameter (Haiku).
 */
const ANTHROPIC_MESSAGES = [
  /^'[^'\s]{1,200}' does not support thinking\.?$/,
  /^adaptive thinking is not supported on this model\.?$/,
  /^This model does not support the effort parameter\.?$/,
];

/**
 * Gemini's messages (INVALID_ARGUMENT): a thinkingLevel to a model before Gemini 3 (2.5 takes
 * only a budget); any thinkingConfig to a model that does not think (2.0, image models).
 */
const GEMINI_MESSAGES = [
  /^Thinking level is not supported for this model\.?$/,
  /^thinking_config is not supported\.?$/,
  /^Thinking is not enabled for models\/\S{1,200}$/,
];

/**
 * Anthropic's message for a budget (`thinking.type: "enabled"`) to a model that thinks
 * adaptively only (Claude Opus 4.7 and later), which thinks when asked adaptively.
 */
const ANTHROPIC_ADAPTIVE_ONLY = /^"thinking\.type\.enabled" is not supported for this model\. Use "thinking\.type\.adaptive" and "output_config\.effort" to control thinking behavior\.?$/;

/**
 * What a refused reasoning setting becomes when the request goes again: left out, or (a
 * budget to a model that thinks adaptively only) sent as adaptive thinking.
 */
export type ReasoningRemedy = "leave out" | "adaptive";

/**
 * Each provider's 400 for a model that does not take the reasoning setting it was sent, read
 * from the whole message (or OpenAI's field and code), so that no other error that mentions
 * thinking matches, and what the setting becomes for it. Left out: a refusal to turn thinking
 * off (the model would think anyway, and bill for it).
 */
const REFUSALS: Record<WireFormat, (error: UpstreamError) => ReasoningRemedy | undefined> = {
  // gpt-4o, gpt-4.1 and other models that do not reason: "Unsupported parameter: 'reasoning_effort' is not supported with this model."
  openai: (error) => leftOutIf(error.param === "reasoning_effort" && error.code === "unsupported_parameter"),
  anthropic: (error) => (ANTHROPIC_ADAPTIVE_ONLY.test(error.message) ? "adaptive" : leftOutIf(matchesOne(error.message, ANTHROPIC_MESSAGES))),
  gemini: (error) => leftOutIf(matchesOne(error.message, GEMINI_MESSAGES)),
};

function leftOutIf(refused: boolean): ReasoningRemedy | undefined {
  return refused ? "leave out" : undefined;
}

function matchesOne(message: string, patterns: readonly RegExp[]): boolean {
  return patterns.some((pattern) => pattern.test(message));
}

/**
 * What the reasoning setting becomes when an upstream of `format` refused the request for it,
 * which the model does not take in that form; undefined for any other error.
 */
export function remedyForRefusedReasoning(error: UpstreamError, format: WireFormat): ReasoningRemedy | undefined {
  return error.failure === "status" && error.upstreamStatus === 400 ? REFUSALS[format](error) : undefined;
}
