import type { FinishReason } from "../../canonical/chat.ts";

const FILTERED = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"]);

/** A Gemini finishReason in canonical terms; a STOP after function calls is a tool-call stop. */
export function mapGeminiFinishReason(reason: string | null | undefined, calledTools: boolean): FinishReason {
  if (reason === "MAX_TOKENS") return "length";
  if (reason && FILTERED.has(reason)) return "content_filter";
  return calledTools ? "tool_calls" : "stop";
}

/**
 * A canonical finish reason as Gemini writes it. Gemini has no refusal of its own: SAFETY,
 * a stop for a policy reason, is the one a caller already handles as "not answered".
 */
export function toGeminiFinishReason(reason: FinishReason): string {
  if (reason === "length") return "MAX_TOKENS";
  if (reason === "content_filter" || reason === "refusal") return "SAFETY";
  return "STOP";
}
