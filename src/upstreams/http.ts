import * as v from "valibot";
import { UpstreamError } from "./upstream-error.ts";

/** Largest upstream error body read to build a message. */
const MAX_ERROR_BODY = 16 * 1024;

/** The `message` of a provider's JSON error body, or a short excerpt of the text. */
function messageOf(text: string, status: number): string {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const error = json.error;
    const message = typeof error === "string" ? error : (error?.message ?? json.message);
    if (typeof message === "string" && message !== "") return message.slice(0, 500);
  } catch {
    // not JSON: fall through to the status line
  }
  return `upstream answered ${status}`;
}

/** POSTs JSON upstream; see postToUpstream. */
export function postJson(
  fetchFn: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
  firstByteTimeoutMs: number,
): Promise<Response> {
  return postToUpstream(fetchFn, url, { "content-type": "application/json", ...headers }, JSON.stringify(body), signal, firstByteTimeoutMs);
}

/**
 * POSTs a body upstream (JSON text, or a stream such as a multipart upload read from disk).
 * Resolves with a 2xx response (body unread); rejects with a typed UpstreamError for connect
 * failures, aborts and non-2xx statuses.
 */
export async function postToUpstream(
  fetchFn: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: string | ReadableStream<Uint8Array>,
  signal: AbortSignal,
  firstByteTimeoutMs: number,
): Promise<Response> {
  // Fetch reports no connect phase, so one timer covers connecting and waiting for headers;
  // it is cleared once they arrive, leaving the body to the caller's own deadline.
  const firstByte = new AbortController();
  const timer = setTimeout(() => firstByte.abort(new DOMException("first byte timeout", "TimeoutError")), firstByteTimeoutMs);
  const combined = AbortSignal.any([signal, firstByte.signal]);
  let response: Response;
  try {
    // A stream body needs half-duplex mode in fetch implementations that follow the standard.
    // Redirects are not followed: an API does not answer with one, and following it would
    // send the channel's key (x-api-key, x-goog-api-key) to whatever host Location names.
    const init: RequestInit & { duplex?: "half" } = { method: "POST", headers, body, signal: combined, redirect: "manual" };
    if (typeof body !== "string") init.duplex = "half";
    response = await fetchFn(url, init);
  } catch {
    if (combined.aborted) {
      const reason = combined.reason as { name?: string } | undefined;
      throw new UpstreamError(reason?.name === "TimeoutError" ? "timeout" : "connect", "the upstream did not answer in time");
    }
    throw new UpstreamError("connect", "could not connect to the upstream");
  } finally {
    clearTimeout(timer);
  }
  if (response.ok) return response;
  if (response.status >= 300 && response.status < 400) {
    response.body?.cancel().catch(() => {});
    throw new UpstreamError("status", `upstream answered ${response.status}, a redirect, which is not followed: check the channel's base_url`, response.status);
  }
  const text = await readLimited(response);
  const retryAfter = Number(response.headers.get("retry-after"));
  throw new UpstreamError("status", messageOf(text, response.status), response.status, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** Reads at most MAX_ERROR_BODY bytes of a body, then drops the rest. */
async function readLimited(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // a broken error body still leaves the status to report
  } finally {
    reader.cancel().catch(() => {});
  }
  return text;
}

/** The UpstreamError for a body read that failed: cut short by the deadline, or broken off by the upstream. */
function bodyReadError(error: unknown): UpstreamError {
  if ((error as { name?: unknown } | null)?.name === "TimeoutError") return new UpstreamError("timeout", "the upstream did not finish its answer in time");
  return new UpstreamError("protocol", "the upstream broke off its answer");
}

/** Reads a 2xx body as text, or throws an UpstreamError (a failed read is the upstream's failure, not the gateway's 500). */
export async function readText(response: Response): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw bodyReadError(error);
  }
}

/** Reads a 2xx body as JSON, or throws an UpstreamError: not JSON, or see readText. */
export async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch (error) {
    if (error instanceof SyntaxError) throw new UpstreamError("protocol", "upstream sent a body that is not JSON");
    throw bodyReadError(error);
  }
}

/** Parses a 2xx JSON body against a lenient schema of the fields used, or throws a protocol UpstreamError. */
export async function readJsonAs<S extends v.GenericSchema>(response: Response, schema: S, what: string): Promise<v.InferOutput<S>> {
  const parsed = v.safeParse(schema, await readJson(response));
  if (!parsed.success) throw new UpstreamError("protocol", `upstream sent ${what} of an unexpected shape`);
  return parsed.output;
}
