import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A loopback OpenAI-compatible upstream for tests: a real HTTP server (Bun.serve on
 * 127.0.0.1, port 0) answering POST /v1/chat/completions in OpenAI's wire format.
 *
 * - every request is recorded (method, path, lower-cased headers, parsed JSON body);
 * - non-streaming answers come from test/fixtures/openai-chat-completion*.json;
 * - streaming answers replay a recorded SSE fixture (test/fixtures/*.sse) event by event;
 * - per test, `setBehavior` sets a status + error body, delays, other fixtures, a cut-off
 *   stream, or a `script` that answers the request itself.
 */

export const FIXTURES_DIR = join(import.meta.dir, "..", "fixtures");

export interface RecordedRequest {
  method: string;
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: any;
  rawBody: string;
}

export interface UpstreamBehavior {
  /** HTTP status to answer with; anything but 2xx answers `errorBody` (default 200). */
  status: number;
  /** Error body for a non-2xx status; an OpenAI-shaped default for the status otherwise. */
  errorBody?: unknown;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Waits this long before answering. */
  delayMs: number;
  /** Waits this long between two streamed events. */
  chunkDelayMs: number;
  /** Non-streaming body; default: the tools fixture when the request has tools, else the plain one. */
  completion?: unknown;
  /** SSE fixture file name in test/fixtures; default: the tool-call stream when the request has tools. */
  streamFixture?: string;
  /**
   * Stream only: after replaying the fixture, how the connection ends: "end" (a clean end of the
   * body, the default) or "abort" (the body errors, dropping the connection mid-response).
   */
  streamEnd: "end" | "abort";
  /**
   * Stream only: writes the fixture in pieces of this many bytes (splitting multi-byte UTF-8
   * characters and lines), yielding to the event loop between pieces; 0 writes event by event.
   */
  byteChunkSize: number;
  /** Answers the request itself, replacing everything above. */
  script?: (request: RecordedRequest) => Response | Promise<Response>;
}

export interface OpenAiUpstream {
  /** Base URL including /v1, as a channel's base_url, e.g. http://127.0.0.1:40123/v1 */
  url: string;
  port: number;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** Changes the behaviour for the following requests (merged onto the defaults, not onto the previous call). */
  setBehavior(behavior: Partial<UpstreamBehavior>): void;
  /** Clears the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULTS: UpstreamBehavior = { status: 200, delayMs: 0, chunkDelayMs: 0, streamEnd: "end", byteChunkSize: 0 };

export function readFixture(name: string): string {
  return readFileSync(join(FIXTURES_DIR, name), "utf8");
}

/** The events of an SSE fixture, as the `data` strings, split on blank lines. */
export function fixtureEvents(name: string): string[] {
  return readFixture(name)
    .split(/\n\n/)
    .filter((block) => block.trim() !== "")
    .map((block) =>
      block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n"),
    );
}

export interface FixtureSummary {
  text: string;
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  endsWithDone: boolean;
}

/** What a stream fixture says, computed from the file alone (independent of the gateway's code). */
export function summarizeStreamFixture(name: string): FixtureSummary {
  const events = fixtureEvents(name);
  const summary: FixtureSummary = { text: "", finishReason: null, usage: null, toolCalls: [], endsWithDone: events.at(-1) === "[DONE]" };
  for (const data of events) {
    if (data === "[DONE]") continue;
    const chunk = JSON.parse(data);
    if (chunk.usage) summary.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) summary.text += choice.delta.content;
      for (const call of choice.delta?.tool_calls ?? []) {
        const slot = (summary.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) summary.finishReason = choice.finish_reason;
    }
  }
  return summary;
}

/** The parsed JSON fixture. */
export function jsonFixture(name: string): any {
  return JSON.parse(readFixture(name));
}

/** OpenAI's own error bodies for the usual statuses. */
export function openAiErrorBody(status: number): unknown {
  switch (status) {
    case 400:
      return { error: { message: "Invalid value for 'messages': upstream rejected the request.", type: "invalid_request_error", param: "messages", code: null } };
    case 401:
      return { error: { message: "Incorrect API key provided: upstr***cret. You can find your API key at https://platform.openai.com/account/api-keys.", type: "invalid_request_error", param: null, code: "invalid_api_key" } };
    case 429:
      return { error: { message: "Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): Limit 3, Used 3, Requested 1.", type: "requests", param: null, code: "rate_limit_exceeded" } };
    default:
      return { error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null } };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An SSE response replaying `name` event by event. */
function replayStream(name: string, behavior: UpstreamBehavior): Response {
  const encoder = new TextEncoder();
  const text = readFixture(name);
  let pieces: Uint8Array[];
  if (behavior.byteChunkSize > 0) {
    const bytes = encoder.encode(text);
    pieces = [];
    for (let i = 0; i < bytes.length; i += behavior.byteChunkSize) pieces.push(bytes.slice(i, i + behavior.byteChunkSize));
  } else {
    pieces = text
      .split(/(?<=\n\n)/)
      .filter((block) => block !== "")
      .map((block) => encoder.encode(block));
  }
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const piece of pieces) {
        if (behavior.chunkDelayMs > 0) await sleep(behavior.chunkDelayMs);
        else if (behavior.byteChunkSize > 0) await new Promise((resolve) => setImmediate(resolve));
        controller.enqueue(piece);
      }
      if (behavior.streamEnd === "abort") {
        await sleep(10);
        // No reason given: Bun then drops the connection without logging an error.
        controller.error();
      } else {
        controller.close();
      }
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...behavior.headers },
  });
}

/** Starts a loopback OpenAI-compatible upstream. */
export async function startOpenAiUpstream(initial: Partial<UpstreamBehavior> = {}): Promise<OpenAiUpstream> {
  let behavior: UpstreamBehavior = { ...DEFAULTS, ...initial };
  const requests: RecordedRequest[] = [];

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
      const recorded: RecordedRequest = { method: req.method, path: url.pathname, headers, body, rawBody };
      requests.push(recorded);
      const current = behavior;

      if (current.delayMs > 0) await sleep(current.delayMs);
      if (current.script) return current.script(recorded);

      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
        return Response.json({ error: { message: `Invalid URL (${req.method} ${url.pathname})`, type: "invalid_request_error", param: null, code: null } }, { status: 404 });
      }
      if (current.status < 200 || current.status > 299) {
        return Response.json(current.errorBody ?? openAiErrorBody(current.status), { status: current.status, headers: current.headers });
      }
      const wantsTools = Array.isArray(body?.tools) && body.tools.length > 0;
      if (body?.stream === true) {
        return replayStream(current.streamFixture ?? (wantsTools ? "openai-chat-tool-stream.sse" : "openai-chat-stream.sse"), current);
      }
      const completion = current.completion ?? jsonFixture(wantsTools ? "openai-chat-completion-tools.json" : "openai-chat-completion.json");
      return Response.json(completion, { status: current.status, headers: current.headers });
    },
  });

  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setBehavior(next) {
      behavior = { ...DEFAULTS, ...next };
    },
    reset() {
      requests.length = 0;
    },
    async close() {
      await server.stop(true);
    },
  };
}

/** A loopback base URL nothing listens on (a server was bound to the port, then closed). */
export async function closedPortUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = server.port;
  await server.stop(true);
  return `http://127.0.0.1:${port}/v1`;
}
