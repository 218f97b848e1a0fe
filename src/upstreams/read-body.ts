import * as v from "valibot";
import { settleWithin, TIMED_OUT } from "../streams/settle-within.ts";
import type { ChunkReader } from "../streams/tap-stream.ts";
import { concatBytes } from "../lib/concat-bytes.ts";
import type { UpstreamCall } from "./adapter.ts";
import { pastBodyLimit, UpstreamError } from "./upstream-error.ts";

/** The UpstreamError for a body read that failed: cut short by the deadline, or broken off by the upstream. */
function bodyReadError(error: unknown): UpstreamError {
  if ((error as { name?: unknown } | null)?.name === "TimeoutError") return new UpstreamError("timeout", "the upstream did not finish its answer in time");
  return new UpstreamError("protocol", "the upstream broke off its answer");
}

function stallError(idleMs: number): UpstreamError {
  return new UpstreamError("timeout", `the upstream's answer stalled: nothing came for ${idleMs} ms`);
}

/**
 * Reads a 2xx upstream body chunk by chunk, each read waiting at most `idleMs` (the stream
 * idle timeout) for the upstream: a body that stalls is cancelled, which frees its connection,
 * and the read throws a timeout UpstreamError. A read that fails is typed too (bodyReadError),
 * so a misbehaving body is the upstream's 502 or 504, never the gateway's 500.
 */
export function idleLimitedReader(body: ReadableStream<Uint8Array>, idleMs: number): ChunkReader<Uint8Array> {
  const reader = body.getReader();
  return {
    async read() {
      let result: Awaited<ReturnType<typeof reader.read>> | typeof TIMED_OUT;
      try {
        result = await settleWithin(reader.read(), idleMs);
      } catch (error) {
        throw bodyReadError(error);
      }
      if (result !== TIMED_OUT) return result;
      reader.cancel("idle timeout").catch(() => {});
      throw stallError(idleMs);
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

/**
 * A streamed body once its first chunk has come (under the idle limit of idleLimitedReader),
 * so that an upstream that sends its head and then nothing fails before the caller is
 * answered, and can fail over. The reader gives that chunk first, then the rest, each read
 * under the same limit. A body that ends empty is a protocol failure: "upstream sent no {what}".
 */
export async function afterFirstChunk(body: ReadableStream<Uint8Array>, idleMs: number, what: string): Promise<ChunkReader<Uint8Array>> {
  const reader = idleLimitedReader(body, idleMs);
  const first = await reader.read();
  if (first.done) throw new UpstreamError("protocol", `upstream sent no ${what}`);
  let pending: typeof first | null = first;
  return {
    read() {
      if (!pending) return reader.read();
      const chunk = pending;
      pending = null;
      return Promise.resolve(chunk);
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

/** Largest upstream error body read to build a message. */
const MAX_ERROR_BODY = 16 * 1024;

/** The start of an error status's body (at most MAX_ERROR_BODY), for its message; the rest is dropped. */
export async function readErrorExcerpt(response: Response, idleMs: number): Promise<string> {
  if (!response.body) return "";
  const reader = idleLimitedReader(response.body, idleMs);
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // a broken or stalled error body still leaves the status to report
  } finally {
    reader.cancel().catch(() => {});
  }
  return text;
}

/** What ends a response's body read when it stalls: its fetch's own abort controller. */
const bodyAborts = new WeakMap<Response, AbortController>();

/** Notes that aborting `controller` (part of the fetch's signal) ends `response`'s body read and frees its connection. */
export function abortableBody(response: Response, controller: AbortController): void {
  bodyAborts.set(response, controller);
}

/** How an upstream's answer may be read: how long to wait for it, and how much of it to hold. */
export type BodyLimits = Pick<UpstreamCall, "idleTimeoutMs" | "maxBodyBytes">;

const answerTooLarge = (maxBytes: number) => pastBodyLimit("the upstream's answer is larger than", maxBytes);

/**
 * The body's size when the head states it for the bytes `fetch` will give: a Content-Length
 * of a compressed body counts what came over the wire, not what it inflates to, so it
 * bounds nothing (1 KB of gzip is 1 MB of JSON).
 */
function statedLength(response: Response): number | null {
  const header = response.headers.get("content-length");
  if (header === null || response.headers.has("content-encoding")) return null;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : null;
}

/** A body of unstated size as text, counted as it comes and given up (cancelled) the moment it passes `maxBytes`. */
async function readCountedText(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.length;
    if (size > maxBytes) {
      reader.cancel("too large").catch(() => {});
      throw answerTooLarge(maxBytes);
    }
    chunks.push(next.value);
  }
  return new TextDecoder().decode(concatBytes(chunks));
}

/**
 * A 2xx body read whole, within `limits`. A body whose stated length is within maxBodyBytes
 * is read by `read` (the runtime's own text() or json(), much cheaper than a read loop on the
 * path of every non-streamed chat answer); one stated larger is refused unread, its body
 * cancelled to free the connection; one of unstated size (chunked, or compressed) is counted
 * as it comes and given up past the limit, then `parse`d. Too large is a protocol
 * UpstreamError. The body must come within idleTimeoutMs (the stream idle timeout) of the
 * headers: a body that stalls is aborted, which frees its connection, and is a timeout
 * UpstreamError. A read that fails is typed too (bodyReadError), so a misbehaving body is the
 * upstream's 502 or 504, never the gateway's 500.
 */
async function readWhole<T>(response: Response, limits: BodyLimits, read: (response: Response) => Promise<T>, parse: (text: string) => T): Promise<T> {
  const length = statedLength(response);
  if (length !== null && length > limits.maxBodyBytes) {
    response.body?.cancel("too large").catch(() => {});
    throw answerTooLarge(limits.maxBodyBytes);
  }
  const reading = length !== null || !response.body ? read(response) : readCountedText(response.body, limits.maxBodyBytes).then(parse);
  let result: T | typeof TIMED_OUT;
  try {
    result = await settleWithin(reading, limits.idleTimeoutMs);
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if (error instanceof SyntaxError) throw new UpstreamError("protocol", "upstream sent a body that is not JSON");
    throw bodyReadError(error);
  }
  if (result !== TIMED_OUT) return result;
  bodyAborts.get(response)?.abort(new DOMException("idle timeout", "TimeoutError"));
  throw stallError(limits.idleTimeoutMs);
}

/** Reads a 2xx body as text (see readWhole). */
export function readText(response: Response, limits: BodyLimits): Promise<string> {
  return readWhole(response, limits, (r) => r.text(), (text) => text);
}

/** Reads a 2xx body as JSON, or throws an UpstreamError: not JSON, or see readWhole. */
export function readJson(response: Response, limits: BodyLimits): Promise<unknown> {
  return readWhole(response, limits, (r) => r.json(), JSON.parse);
}

/** Parses a 2xx JSON body against a lenient schema of the fields used, or throws a protocol UpstreamError. */
export async function readJsonAs<S extends v.GenericSchema>(response: Response, limits: BodyLimits, schema: S, what: string): Promise<v.InferOutput<S>> {
  const parsed = v.safeParse(schema, await readJson(response, limits));
  if (!parsed.success) throw new UpstreamError("protocol", `upstream sent ${what} of an unexpected shape`);
  return parsed.output;
}
