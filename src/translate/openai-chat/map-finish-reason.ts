import type { FinishReason } from "../../canonical/chat.ts";

/** An OpenAI finish_reason in canonical terms; unknown values count as a normal stop. */
export function mapOpenAiFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "stop";
  }
}

/** A canonical finish reason as OpenAI writes it: a refusal ends with "stop", its words in `refusal`. */
export function toOpenAiFinishReason(reason: FinishReason): string {
  return reason === "error" || reason === "refusal" ? "stop" : reason;
}
