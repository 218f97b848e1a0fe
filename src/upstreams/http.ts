import type { UpstreamCall } from "./adapter.ts";
import { abortableBody, readErrorExcerpt } from "./read-body.ts";
import { UpstreamError } from "./upstream-error.ts";
import { maskChannelKey } from "./mask-channel-key.ts";

/** What posting upstream needs of a call: its fetch, signal and time limits, and the channel whose key it sends. */
export type PostLimits = Pick<UpstreamCall, "channel" | "fetch" | "signal" | "now" | "firstByteTimeoutMs" | "idleTimeoutMs" | "onAnswered">;

/** What the caller is shown of a provider's error answer. */
interface UpstreamErrorText {
  message: string;
  /** The field the provider named (OpenAI's `param`), when it named one. */
  param?: string;
  /** The provider's code for the error, when it gave one as a string (OpenAI's `code`, e.g. `unsupported_parameter`). */
  code?: string;
}

/**
 * The `message` of a provider's JSON error body, or the status line, and its `param` and `code`.
 * Providers may quote the key they were sent (OpenAI's 401 does, in part; some servers quote
 * the whole header), and both reach the caller: the channel's key is masked before either is
 * cut short, so no prefix of it survives either.
 */
function errorTextOf(text: string, status: number, channelKey: string | null): UpstreamErrorText {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown; param?: unknown; code?: unknown } | string; message?: unknown };
    const error = json.error;
    const message = typeof error === "string" ? error : (error?.message ?? json.message);
    const masked = (text: string, most: number) => maskChannelKey(text, channelKey).slice(0, most);
    const param = typeof error === "object" && typeof error?.param === "string" && error.param !== "" ? masked(error.param, 200) : undefined;
    // Matched, never shown; Gemini's numeric code repeats the status and is left out.
    const code = typeof error === "object" && typeof error?.code === "string" ? error.code : undefined;
    if (typeof message === "string" && message !== "") return { message: masked(message, 500), param, code };
  } catch {
    // not JSON: fall through to the status line
  }
  return { message: `upstream answered ${status}` };
}

/**
 * An upstream's Retry-After in whole seconds: delay-seconds rounded up (some servers send
 * "0.5", and the caller's own Retry-After must be a whole number), or the seconds until an
 * HTTP date, which RFC 9110 allows as well; undefined when absent, past or unreadable.
 */
function retryAfterOf(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : (Date.parse(value) - now) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : undefined;
}

/** POSTs JSON upstream; see postToUpstream. */
export function postJson(call: PostLimits, url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return postToUpstream(call, url, { "content-type": "application/json", ...headers }, JSON.stringify(body));
}

/**
 * POSTs a body upstream (JSON text, or a stream such as a multipart upload read from disk).
 * Resolves with a 2xx response (body unread); rejects with a typed UpstreamError for connect
 * failures, aborts and non-2xx statuses.
 */
export async function postToUpstream(call: PostLimits, url: string, headers: Record<string, string>, body: string | ReadableStream<Uint8Array>): Promise<Response> {
  // Fetch reports no connect phase, so one timer covers connecting and waiting for headers;
  // it is cleared once they arrive: the body's reads have their own idle limit (read-body.ts).
  // The attempt's own controller also follows the call's signal (the request's deadline, one
  // per request, so the listener goes with it): AbortSignal.any did the same at 1.7% of a
  // request's CPU.
  const attempt = new AbortController();
  const timer = setTimeout(() => attempt.abort(new DOMException("first byte timeout", "TimeoutError")), call.firstByteTimeoutMs);
  if (call.signal.aborted) attempt.abort(call.signal.reason);
  else call.signal.addEventListener("abort", () => attempt.abort(call.signal.reason), { once: true });
  let response: Response;
  try {
    // A stream body needs half-duplex mode in fetch implementations that follow the standard.
    // Redirects are not followed: an API does not answer with one, and following it would
    // send the channel's key (x-api-key, x-goog-api-key) to whatever host Location names.
    const init: RequestInit & { duplex?: "half" } = { method: "POST", headers, body, signal: attempt.signal, redirect: "manual" };
    if (typeof body !== "string") init.duplex = "half";
    response = await call.fetch(url, init);
  } catch (error) {
    if (attempt.signal.aborted) {
      const reason = attempt.signal.reason as { name?: string } | undefined;
      throw new UpstreamError(reason?.name === "TimeoutError" ? "timeout" : "connect", "the upstream did not answer in time");
    }
    const code = connectErrorCode(error);
    throw new UpstreamError("connect", `could not connect to the upstream${code ? ` (${code})` : ""}`);
  } finally {
    clearTimeout(timer);
  }
  if (response.ok) {
    call.onAnswered?.();
    // The attempt's controller is the fetch's signal: aborting it ends the body read.
    abortableBody(response, attempt);
    return response;
  }
  if (response.status >= 300 && response.status < 400) {
    response.body?.cancel().catch(() => {});
    throw new UpstreamError("status", `upstream answered ${response.status}, a redirect, which is not followed: check the channel's base_url`, response.status);
  }
  const text = await readErrorExcerpt(response, call.idleTimeoutMs);
  const { message, param, code } = errorTextOf(text, response.status, call.channel.apiKey);
  throw new UpstreamError("status", message, response.status, retryAfterOf(response.headers.get("retry-after"), call.now()), param, code);
}

/**
 * The runtime's code for a failed connection (Bun's and Deno's on the error, Node's on its
 * cause): ECONNREFUSED, ENOTFOUND, a certificate's failure. It tells an operator a wrong host
 * from a refused port or a TLS mismatch, and names nothing of the channel's.
 */
function connectErrorCode(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } };
  const found = code ?? cause?.code;
  return typeof found === "string" && /^[A-Za-z0-9_]{1,64}$/.test(found) ? found : undefined;
}
