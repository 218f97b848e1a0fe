import type { FinishReason } from "../../canonical/chat.ts";

const FILTERED = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"]);

/**
 * Gemini's finish reasons for a function call the model began and could not write: its call
 * would not parse (MALFORMED_FUNCTION_CALL), or it called a tool the request did not offer
 * (UNEXPECTED_TOOL_CALL). The answer holds nothing else, and in another format it would read
 * as an empty answer that finished normally.
 */
const UNWRITTEN_CALLS = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"]);

/** Why an answer that finished for `reason` is of no use to a caller of another format; undefined when it is. */
export function unusableGeminiFinish(reason: string | null | undefined): string | undefined {
  if (!reason || !UNWRITTEN_CALLS.has(reason)) return undefined;
  return `the model began a function call it could not complete (Gemini's ${reason}); a retry may succeed`;
}

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
