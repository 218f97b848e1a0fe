import type { ChatResponse, ReasoningEffort, ReasoningRequest, StreamPart } from "../canonical/chat.ts";
import type { StreamStep } from "../streams/stream-step.ts";

/**
 * Each format's named efforts on the canonical scale. A name not here (one a provider adds
 * later) reaches an upstream of the caller's format as sent, and is warned for another.
 */
const OPENAI_EFFORTS = new Map<unknown, ReasoningEffort>([
  ["none", "none"],
  ["minimal", "minimal"],
  ["low", "low"],
  ["medium", "medium"],
  ["high", "high"],
  ["xhigh", "xhigh"],
]);
const ANTHROPIC_EFFORTS = new Map<unknown, ReasoningEffort>([
  ["low", "low"],
  ["medium", "medium"],
  ["high", "high"],
  ["xhigh", "xhigh"],
  ["max", "max"],
]);
const GEMINI_LEVELS = new Map<unknown, ReasoningEffort>([
  ["MINIMAL", "minimal"],
  ["LOW", "low"],
  ["MEDIUM", "medium"],
  ["HIGH", "high"],
]);

/** OpenAI's reasoning_effort (chat) or reasoning.effort (Responses) on the canonical scale. */
export const openAiEffort = (value: unknown): ReasoningEffort | undefined => OPENAI_EFFORTS.get(value);
/** Anthropic's output_config.effort on the canonical scale. */
export const anthropicEffort = (value: unknown): ReasoningEffort | undefined => ANTHROPIC_EFFORTS.get(value);
/** Gemini's thinkingLevel (its enum names, in any case) on the canonical scale. */
export const geminiLevel = (value: unknown): ReasoningEffort | undefined => GEMINI_LEVELS.get(typeof value === "string" ? value.toUpperCase() : value);

/** Anthropic's thinking types the canonical form carries. */
export const ANTHROPIC_THINKING_TYPES = ["enabled", "disabled", "adaptive"];

/** Whether an Anthropic `thinking` is of a type the canonical form carries. */
export const isAnthropicThinking = (value: unknown): boolean =>
  typeof value === "object" && value !== null && ANTHROPIC_THINKING_TYPES.includes((value as { type?: unknown }).type as string);

/**
 * The effort a thinking budget stands for, for an upstream that takes an effort: about a
 * thousand tokens is a short think, tens of thousands a long one.
 */
function effortOfBudget(budgetTokens: number): ReasoningEffort {
  if (budgetTokens <= 0) return "none";
  if (budgetTokens < 2_048) return "low";
  return budgetTokens < 16_384 ? "medium" : "high";
}

/** The effort asked for: the caller's own, else its budget's; undefined when the model is to choose. */
export function effortOf(reasoning: ReasoningRequest): ReasoningEffort | undefined {
  return reasoning.effort ?? (reasoning.budgetTokens === undefined ? undefined : effortOfBudget(reasoning.budgetTokens));
}

/** The answer without its reasoning parts, for a caller that did not ask to see them. */
export function withoutReasoning(response: ChatResponse): ChatResponse {
  if (!response.content.some((part) => part.type === "reasoning")) return response;
  return { ...response, content: response.content.filter((part) => part.type !== "reasoning") };
}

/** `render` without the reasoning deltas, for a caller that did not ask to see them. */
export function hidingReasoning<O>(render: StreamStep<StreamPart, O>): StreamStep<StreamPart, O> {
  return {
    transform(part, output) {
      if (part.type !== "reasoning-delta") render.transform(part, output);
    },
    flush: render.flush && ((output) => render.flush!(output)),
    ended: render.ended && (() => render.ended!()),
  };
}
