import type { ChatResponse, ReasoningEffort, ReasoningRequest, StreamPart } from "../canonical/chat.ts";
import type { StreamStep } from "../streams/stream-step.ts";

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
