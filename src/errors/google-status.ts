import { errorBody, type ErrorStatus } from "./gateway-error.ts";
import { GEMINI_OWN_VERSIONS } from "../lib/gemini-api-versions.ts";

/**
 * Google's canonical status name for each status the gateway answers. Gemini's errors carry
 * it beside `code` and `message`, and Google's SDKs read it (Python's google-genai keeps it
 * as `APIError.status`), so a Gemini-format caller gets it too.
 */
const GOOGLE_STATUS: Record<ErrorStatus, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  // An account out of funds, which no retry mends: what Gemini answers when billing is not set up.
  402: "FAILED_PRECONDITION",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "INVALID_ARGUMENT",
  // The client was too slow to send its body.
  408: "DEADLINE_EXCEEDED",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Any path under one of Gemini's own versions (/v1beta/, /v1alpha/). */
const GEMINI_OWN_PATH = new RegExp(`^/(?:${GEMINI_OWN_VERSIONS.join("|")})/`);
/** A Gemini action under /v1 (the genai SDK's `apiVersion: "v1"`), as under /v1beta. */
const GEMINI_V1_ACTION = /^\/v1\/models\/.+:[A-Za-z]+$/;

/** Whether `path` is served in Gemini's format, so its errors are written the way Gemini writes them. */
export const isGeminiPath = (path: string) => GEMINI_OWN_PATH.test(path) || GEMINI_V1_ACTION.test(path);

/** The error object of a Gemini-format answer: the spec's fields and Google's `status`. */
export const geminiErrorObject = (status: ErrorStatus, message: string) => ({ ...errorBody(status, message).error, status: GOOGLE_STATUS[status] });
