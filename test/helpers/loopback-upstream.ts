import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "./common.ts";

export { sleep };

/**
 * The mechanism shared by the loopback upstreams of the tests (openai-upstream.ts,
 * anthropic-upstream.ts, gemini-upstream.ts): a real HTTP server (Bun.serve on 127.0.0.1,
 * port 0) that records every request, holds a per-test behaviour (status, delays, a script),
 * and replays recorded SSE fixtures event by event or in byte pieces, ending cleanly, cut
 * short or with a dropped connection. Each provider's helper adds only its wire format.
 */

export const FIXTURES_DIR = join(import.meta.dir, "..", "fixtures");

export function readFixture(name: string): string {
  return readFileSync(join(FIXTURES_DIR, name), "utf8");
}

/** The parsed JSON fixture. */
export function jsonFixture(name: string): any {
  return JSON.parse(readFixture(name));
}

/**
 * The events of an SSE fixture, in order (any newline style): the `event` name ("message"
 * when the event has none) and its `data` lines joined with "\n".
 */
export function sseFixtureEvents(name: string): { event: string; data: string }[] {
  return readFixture(name)
    .split(/\r\n\r\n|\n\n|\r\r/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event = "message";
      const data: string[] = [];
      for (const line of block.split(/\r\n|\n|\r/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      return { event, data: data.join("\n") };
    });
}

/** Keywords whose values are data, not schemas: what they hold is never checked as a schema. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples"]);

/** Whether a JSON Schema node describes objects (its type is, or includes, "object"). */
export function isObjectSchema(node: Record<string, any>): boolean {
  return node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"));
}

/**
 * The first error `check` finds in a JSON Schema, walking every schema within it (anything
 * under a data keyword aside), or null: how the loopback upstreams hold structured-output
 * schemas to their provider's rules.
 */
export function firstSchemaError(schema: unknown, check: (node: Record<string, any>) => string | null): string | null {
  if (Array.isArray(schema)) return schema.map((item) => firstSchemaError(item, check)).find((error) => error !== null) ?? null;
  if (schema === null || typeof schema !== "object") return null;
  const node = schema as Record<string, any>;
  const own = check(node);
  if (own) return own;
  for (const [key, value] of Object.entries(node)) {
    const error = DATA_KEYWORDS.has(key) ? null : firstSchemaError(value, check);
    if (error) return error;
  }
  return null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: any;
  rawBody: string;
}

/** What every loopback upstream can be told to do; each provider adds its default bodies. */
export interface LoopbackBehavior<R extends RecordedRequest = RecordedRequest> {
  /** HTTP status to answer with; anything but 2xx answers `errorBody` (default 200). */
  status: number;
  /** Error body for a non-2xx status; the provider's own body for the status otherwise. */
  errorBody?: unknown;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Waits this long before answering. */
  delayMs: number;
  /** Waits this long between two streamed events (or byte pieces). */
  chunkDelayMs: number;
  /** SSE fixture file name in test/fixtures; default: the provider's (tool) stream. */
  streamFixture?: string;
  /** Stream only: replays just the first this-many events of the fixture (a stream cut short). */
  cutAfterEvents?: number;
  /**
   * Stream only: after replaying the fixture, how the connection ends: "end" (a clean end of the
   * body, the default) or "abort" (the body errors, dropping the connection mid-response).
   */
  streamEnd: "end" | "abort";
  /**
   * Stream only, with streamEnd "abort": the connection drops once this settles, instead of
   * 10 ms after the last piece. A test that asserts what the caller saw before the drop
   * settles it from the caller's side: when a connection resets, Bun's fetch discards the
   * bytes its reader has not taken yet, so a fixed delay races the gateway's reads.
   */
  dropWhen?: Promise<unknown>;
  /**
   * Stream only: writes the fixture in pieces of this many bytes (splitting multi-byte UTF-8
   * characters and lines), yielding to the event loop between pieces; 0 writes event by event.
   */
  byteChunkSize: number;
  /** Answers the request itself, replacing the provider's answer (whatever checks it runs first). */
  script?: (request: R) => Response | Promise<Response>;
}

export const BEHAVIOR_DEFAULTS: LoopbackBehavior = { status: 200, delayMs: 0, chunkDelayMs: 0, streamEnd: "end", byteChunkSize: 0 };

/** True for a status the upstream answers with an error body. */
export function isErrorStatus(status: number): boolean {
  return status < 200 || status > 299;
}

/** An SSE response replaying the fixture `name` as `behavior` says (events, pieces, cut, end). */
export function replaySse(
  name: string,
  behavior: Pick<LoopbackBehavior, "chunkDelayMs" | "cutAfterEvents" | "streamEnd" | "dropWhen" | "byteChunkSize" | "headers">,
  headers: Record<string, string>,
): Response {
  const encoder = new TextEncoder();
  // An event ends at a blank line, in either newline style (Gemini sends CRLF CRLF).
  const events = readFixture(name)
    .split(/(?<=\r\n\r\n|\n\n)/)
    .filter((block) => block !== "")
    .slice(0, behavior.cutAfterEvents);
  let pieces: Uint8Array[];
  if (behavior.byteChunkSize > 0) {
    const bytes = encoder.encode(events.join(""));
    pieces = [];
    for (let i = 0; i < bytes.length; i += behavior.byteChunkSize) pieces.push(bytes.slice(i, i + behavior.byteChunkSize));
  } else {
    pieces = events.map((block) => encoder.encode(block));
  }
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const piece of pieces) {
        if (behavior.chunkDelayMs > 0) await sleep(behavior.chunkDelayMs);
        else if (behavior.byteChunkSize > 0) await new Promise((resolve) => setImmediate(resolve));
        controller.enqueue(piece);
      }
      if (behavior.streamEnd === "abort") {
        await (behavior.dropWhen ?? sleep(10));
        // No reason given: Bun then drops the connection without logging an error.
        controller.error();
      } else {
        controller.close();
      }
    },
  });
  return new Response(body, { status: 200, headers: { ...headers, ...behavior.headers } });
}

/**
 * An SSE answer for a `script`: `pings` keep-alive comments `everyMs` apart (an upstream alive
 * but not answering yet, as a reasoning model is), then the fixture `name` whole;
 * `onAnswer` is called just before the fixture is sent.
 */
export function pingsThenFixture(name: string, pings: number, everyMs: number, onAnswer: () => void = () => {}): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 0; i < pings; i++) {
        controller.enqueue(encoder.encode(": keep-alive\n\n"));
        await sleep(everyMs);
      }
      onAnswer();
      controller.enqueue(encoder.encode(readFixture(name)));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** A running loopback upstream. */
export interface LoopbackUpstream<R extends RecordedRequest, B> {
  /** Base URL, as a channel's base_url: the host root, e.g. http://127.0.0.1:40123 (with /v1 for OpenAI). */
  url: string;
  port: number;
  /** Every request received, oldest first. */
  requests: R[];
  /** Changes the behaviour for the following requests (merged onto the defaults, not onto the previous call). */
  setBehavior(behavior: Partial<B>): void;
  /** Clears the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

export interface LoopbackOptions<R extends RecordedRequest, B> {
  /** The behaviour until the first setBehavior (merged onto BEHAVIOR_DEFAULTS). */
  initial: Partial<B>;
  /** Appended to http://127.0.0.1:{port} in `url`, e.g. "/v1"; "" by default. */
  basePath?: string;
  /** Adds the provider's own fields to a recorded request. */
  record?: (request: RecordedRequest, url: URL) => R;
  /** The provider's answer, called after the request is recorded and `delayMs` has passed. */
  answer: (request: R, behavior: B) => Response | Promise<Response>;
}

/** Starts a loopback server that records each request, waits `delayMs`, then lets `answer` reply. */
export function startLoopbackUpstream<R extends RecordedRequest, B extends LoopbackBehavior<R>>(
  options: LoopbackOptions<R, B>,
): LoopbackUpstream<R, B> {
  const withDefaults = (next: Partial<B>) => ({ ...BEHAVIOR_DEFAULTS, ...next }) as B;
  let behavior = withDefaults(options.initial);
  const requests: R[] = [];

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const rawBody = await req.text();
      let body: any;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const headers: Record<string, string> = {};
      req.headers.forEach((value, key) => {
        headers[key.toLowerCase()] = value;
      });
      const base: RecordedRequest = { method: req.method, path: url.pathname, headers, body, rawBody };
      const recorded = options.record ? options.record(base, url) : (base as R);
      requests.push(recorded);
      const current = behavior;
      if (current.delayMs > 0) await sleep(current.delayMs);
      return options.answer(recorded, current);
    },
  });

  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}${options.basePath ?? ""}`,
    port,
    requests,
    setBehavior(next) {
      behavior = withDefaults(next);
    },
    reset() {
      requests.length = 0;
    },
    async close() {
      await server.stop(true);
    },
  };
}
