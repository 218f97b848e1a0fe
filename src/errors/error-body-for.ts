import { errorBody, type ErrorStatus } from "./gateway-error.ts";
import { geminiErrorObject, isGeminiPath } from "./google-status.ts";

/** Whether `path` is served in Anthropic's messages format. */
const isAnthropicPath = (path: string) => path === "/v1/messages" || path.startsWith("/v1/messages/");

/**
 * The spec's error body as each caller format writes it, the spec's fields always kept:
 * Google's `status` beside them for a Gemini-format caller; for a messages-format caller the
 * top-level `"type": "error"` and `request_id` that Anthropic's API sends, so code that tells
 * an error body by its type (as the stream's error event is told) reads this one as well.
 */
export function errorBodyFor(path: string, status: ErrorStatus, message: string, requestId?: string) {
  if (isGeminiPath(path)) return { error: geminiErrorObject(status, message) };
  if (isAnthropicPath(path)) return { type: "error", ...errorBody(status, message), ...(requestId ? { request_id: requestId } : {}) };
  return errorBody(status, message);
}
