/**
 * The HTTP status a provider's error object stands for, when it names one, so an error sent
 * as a stream's first event is treated as the same error answered before the headers: the
 * caller's own mistake (a prompt past the context window) stays their 400 instead of being
 * retried on every channel and ending as a 502, and an upstream's rate limit is a 429.
 *
 * Read from, in turn: a numeric `code` (Gemini, and OpenAI-compatible servers such as vLLM),
 * Gemini's `status`, and the `type` of Anthropic's and OpenAI's error objects.
 */
export function errorObjectStatus(error: unknown): number | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { code, status, type } = error as { code?: unknown; status?: unknown; type?: unknown };
  if (typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599) return code;
  // Maps, so an upstream's "constructor" or "toString" finds nothing rather than Object's own.
  return (typeof status === "string" ? GOOGLE_STATUSES.get(status) : undefined) ?? (typeof type === "string" ? ERROR_TYPES.get(type) : undefined);
}

/** Anthropic's error types, and OpenAI's where they differ in name. */
const ERROR_TYPES = new Map(Object.entries({
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
  // OpenAI's names
  insufficient_quota: 429,
  server_error: 500,
}));

/** Google's canonical status names, as Gemini's error objects carry them. */
const GOOGLE_STATUSES = new Map(Object.entries({
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNKNOWN: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
}));
