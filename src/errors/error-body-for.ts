import { errorBody, type ErrorStatus } from "./gateway-error.ts";
import { geminiErrorObject, isGeminiPath } from "./google-status.ts";

/** Whether `path` is served in Anthropic's messages format. */
const isAnthropicPath = (path: string) => path === "/v1/messages" || path.startsWith("/v1/messages/");

/** Whether `path` is the gateway's own admin API, which has the spec's error shape and nothing of a provider's. */
export const isAdminPath = (path: string): boolean => path.startsWith("/v1/admin/");

/** What an error response says beyond its status and message. */
export interface ErrorDetail {
  requestId?: string;
  /** The request field at fault. */
  param?: string;
}

/**
 * The spec's error body as each caller format writes it, the spec's fields always kept:
 * Google's `status` beside them for a Gemini-format caller; for a messages-format caller the
 * top-level `"type": "error"` and `request_id` that Anthropic's API sends, so code that tells
 * an error body by its type (as the stream's error event is told) reads this one as well;
 * for an OpenAI-format caller the field at fault as OpenAI's `param`, when one is known (not
 * on the admin API).
 */
export function errorBodyFor(path: string, status: ErrorStatus, message: string, detail: ErrorDetail = {}) {
  if (isGeminiPath(path)) return { error: geminiErrorObject(status, message) };
  if (isAnthropicPath(path)) return { type: "error", ...errorBody(status, message), ...(detail.requestId ? { request_id: detail.requestId } : {}) };
  const body = errorBody(status, message);
  return detail.param === undefined || isAdminPath(path) ? body : { error: { ...body.error, param: detail.param } };
}
