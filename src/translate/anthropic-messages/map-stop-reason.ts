import type { FinishReason } from "../../canonical/chat.ts";

/**
 * An Anthropic stop_reason in canonical terms. `model_context_window_exceeded` cut the answer
 * short as max_tokens does, only at the context window's end instead of the caller's limit.
 */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "refusal";
    default:
      return "stop";
  }
}

/** A canonical finish reason as Anthropic writes it. */
function toAnthropicStopReason(reason: FinishReason): string {
  switch (reason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
    case "refusal":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** An answer's stop_reason and stop_sequence: "stop_sequence" and the sequence when the upstream said which one ended it. */
export function anthropicStopOf(reason: FinishReason, stopSequence: string | undefined) {
  return stopSequence !== undefined && reason === "stop"
    ? { stop_reason: "stop_sequence", stop_sequence: stopSequence }
    : { stop_reason: toAnthropicStopReason(reason), stop_sequence: null };
}
