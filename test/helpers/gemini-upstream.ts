import { jsonFixture, readFixture, type RecordedRequest } from "./openai-upstream.ts";

/**
 * A loopback Gemini API (generativelanguage) upstream for tests: a real HTTP server
 * (Bun.serve on 127.0.0.1, port 0) answering
 * POST /v1beta/models/{model}:generateContent and :streamGenerateContent in Gemini's wire format.
 *
 * - every request is recorded (method, path, query, model, action, lower-cased headers, parsed body);
 * - it checks what the real API checks first: the path, the key (`x-goog-api-key` or `?key=`;
 *   a wrong one gets Gemini's real answer, a 400 API_KEY_INVALID), non-empty `contents` with
 *   roles user/model, unknown field names at the top level and in generationConfig
 *   (Gemini rejects those with "Unknown name ... Cannot find field"), and that a turn of
 *   functionResponse parts follows a model turn with as many functionCall parts;
 * - non-streaming answers come from test/fixtures/gemini-generate-content*.json;
 * - :streamGenerateContent?alt=sse replays a recorded SSE fixture (test/fixtures/gemini-*.sse,
 *   `data: {GenerateContentResponse}` events separated by CRLF CRLF as Google sends them);
 *   without `alt=sse` it answers the fixture's chunks as one JSON array, as the real API does;
 * - per test, `setBehavior` sets a status + error body, delays, other fixtures, a cut-off
 *   stream, or a `script` that answers the request itself.
 */

export interface GeminiRecordedRequest extends RecordedRequest {
  /** Query parameters, e.g. { alt: "sse" }. */
  query: Record<string, string>;
  /** The model of the path, e.g. "gemini-2.0-flash"; null for another path. */
  model: string | null;
  /** "generateContent" or "streamGenerateContent"; null for another path. */
  action: string | null;
}

export interface GeminiUpstreamBehavior {
  /** HTTP status to answer with; anything but 2xx answers `errorBody` (default 200). */
  status: number;
  /** Error body for a non-2xx status; Gemini's own body for the status otherwise. */
  errorBody?: unknown;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Waits this long before answering. */
  delayMs: number;
  /** Waits this long between two streamed events. */
  chunkDelayMs: number;
  /** Non-streaming body; default: the tools fixture when the request declares functions, else the plain one. */
  response?: unknown;
  /** SSE fixture file name in test/fixtures; default: the function-call stream when the request declares functions. */
  streamFixture?: string;
  /** Stream only: replays just the first this-many events of the fixture (a stream cut short). */
  cutAfterEvents?: number;
  /** Stream only: "end" (a clean end of the body, the default) or "abort" (the connection drops). */
  streamEnd: "end" | "abort";
  /** Stream only: writes the fixture in pieces of this many bytes; 0 writes event by event. */
  byteChunkSize: number;
  /** Answers the request itself, replacing everything above (the path and key checks still run first). */
  script?: (request: GeminiRecordedRequest) => Response | Promise<Response>;
}

export interface GeminiUpstreamOptions extends Partial<GeminiUpstreamBehavior> {
  /** When set, a request with another key gets Gemini's 400 API_KEY_INVALID. */
  apiKey?: string;
}

export interface GeminiUpstream {
  /** Host root, as a `gemini` channel's base_url, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** Every request received, oldest first. */
  requests: GeminiRecordedRequest[];
  /** Changes the behaviour for the following requests (merged onto the defaults, not onto the previous call). */
  setBehavior(behavior: Partial<GeminiUpstreamBehavior>): void;
  /** Clears the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULTS: GeminiUpstreamBehavior = { status: 200, delayMs: 0, chunkDelayMs: 0, streamEnd: "end", byteChunkSize: 0 };

export const GEMINI_PLAIN_FIXTURE = "gemini-generate-content.json";
export const GEMINI_TOOLS_FIXTURE = "gemini-generate-content-tools.json";
export const GEMINI_STREAM_FIXTURE = "gemini-stream.sse";
export const GEMINI_TOOL_STREAM_FIXTURE = "gemini-tool-stream.sse";

/** GenerateContentRequest fields (camelCase and the snake_case proto names Gemini also accepts). */
const REQUEST_FIELDS = new Set([
  "model", "contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings",
  "systemInstruction", "system_instruction", "generationConfig", "generation_config", "cachedContent", "cached_content",
]);

/** GenerationConfig fields (camelCase and snake_case). */
const GENERATION_CONFIG_FIELDS = new Set(
  [
    "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "responseModalities", "candidateCount",
    "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty", "responseLogprobs",
    "logprobs", "enableEnhancedCivicAnswers", "speechConfig", "thinkingConfig", "imageConfig", "mediaResolution",
  ].flatMap((name) => [name, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
);

/** The `data` JSON objects of a Gemini SSE fixture, in order (any newline style). */
export function geminiFixtureChunks(name: string): any[] {
  return readFixture(name)
    .split(/\r\n\r\n|\n\n|\r\r/)
    .filter((block) => block.trim() !== "")
    .map((block) =>
      JSON.parse(
        block
          .split(/\r\n|\n|\r/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n"),
      ),
    );
}

export interface GeminiSummary {
  text: string;
  finishReason: string | null;
  /** The usageMetadata of the last chunk that has one. */
  usage: { promptTokenCount: number; candidatesTokenCount: number; totalTokenCount: number };
  functionCalls: { name: string; args: unknown }[];
}

function summarizeChunks(chunks: any[]): GeminiSummary {
  const summary: GeminiSummary = { text: "", finishReason: null, usage: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 }, functionCalls: [] };
  for (const chunk of chunks) {
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.text === "string" && !part.thought) summary.text += part.text;
      if (part.functionCall) summary.functionCalls.push({ name: part.functionCall.name, args: part.functionCall.args ?? {} });
    }
    if (candidate?.finishReason) summary.finishReason = candidate.finishReason;
    if (chunk.usageMetadata) {
      summary.usage = {
        promptTokenCount: chunk.usageMetadata.promptTokenCount ?? 0,
        candidatesTokenCount: chunk.usageMetadata.candidatesTokenCount ?? 0,
        totalTokenCount: chunk.usageMetadata.totalTokenCount ?? 0,
      };
    }
  }
  return summary;
}

/** What a Gemini stream fixture says, computed from the file alone (independent of the gateway's code). */
export function summarizeGeminiStream(name: string): GeminiSummary {
  return summarizeChunks(geminiFixtureChunks(name));
}

/** The same summary for a non-streaming generateContent fixture. */
export function summarizeGeminiResponse(name: string): GeminiSummary {
  return summarizeChunks([jsonFixture(name)]);
}

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Gemini's own error bodies (google.rpc.Status) for the usual statuses. */
export function geminiErrorBody(status: number, message?: string): unknown {
  const defaults: Record<number, string> = {
    400: "Request contains an invalid argument.",
    401: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
    403: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    404: "models/gemini-unknown is not found for API version v1beta, or is not supported for generateContent.",
    429: "You exceeded your current quota, please check your plan and billing details.",
    500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
  };
  return { error: { code: status, message: message ?? defaults[status] ?? "Unknown error.", status: STATUS_NAMES[status] ?? "UNKNOWN" } };
}

/** Gemini's real answer to a wrong API key: a 400, not a 401. */
export function geminiInvalidKeyBody(): unknown {
  return {
    error: {
      code: 400,
      message: "API key not valid. Please pass a valid API key.",
      status: "INVALID_ARGUMENT",
      details: [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } },
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: "API key not valid. Please pass a valid API key." },
      ],
    },
  };
}

function unknownFieldBody(path: string, name: string): unknown {
  const where = path ? ` at '${path}'` : "";
  const message = `Invalid JSON payload received. Unknown name "${name}"${where}: Cannot find field.`;
  return {
    error: {
      code: 400,
      message,
      status: "INVALID_ARGUMENT",
      details: [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: path, description: message }] }],
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An SSE response replaying `name` event by event (or in byte pieces). */
function replayStream(name: string, behavior: GeminiUpstreamBehavior): Response {
  const encoder = new TextEncoder();
  const events = readFixture(name)
    .split(/(?<=\r\n\r\n|\n\n)/)
    .filter((block) => block !== "");
  const text = events.slice(0, behavior.cutAfterEvents ?? events.length).join("");
  let pieces: Uint8Array[];
  if (behavior.byteChunkSize > 0) {
    const bytes = encoder.encode(text);
    pieces = [];
    for (let i = 0; i < bytes.length; i += behavior.byteChunkSize) pieces.push(bytes.slice(i, i + behavior.byteChunkSize));
  } else {
    pieces = text
      .split(/(?<=\r\n\r\n|\n\n)/)
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
        controller.error();
      } else {
        controller.close();
      }
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "x-content-type-options": "nosniff", ...behavior.headers },
  });
}

/** Field-name checks Gemini applies to a request body; a Response for the first violation. */
function validateBody(body: any): Response | null {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    return Response.json(geminiErrorBody(400, "Invalid JSON payload received."), { status: 400 });
  }
  for (const name of Object.keys(body)) {
    if (!REQUEST_FIELDS.has(name)) return Response.json(unknownFieldBody("", name), { status: 400 });
  }
  const config = body.generationConfig ?? body.generation_config;
  if (config !== undefined) {
    for (const name of Object.keys(config)) {
      if (!GENERATION_CONFIG_FIELDS.has(name)) return Response.json(unknownFieldBody("generation_config", name), { status: 400 });
    }
  }
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return Response.json(geminiErrorBody(400, "* GenerateContentRequest.contents: contents is not specified\n"), { status: 400 });
  }
  for (const content of body.contents) {
    if (content?.role !== undefined && content.role !== "user" && content.role !== "model") {
      return Response.json(geminiErrorBody(400, "Please use a valid role: user, model."), { status: 400 });
    }
    if (!Array.isArray(content?.parts) || content.parts.length === 0) {
      return Response.json(geminiErrorBody(400, "* GenerateContentRequest.contents.parts: contents.parts must not be empty.\n"), { status: 400 });
    }
  }
  for (const [i, content] of body.contents.entries()) {
    const responses = content.parts.filter((p: any) => p?.functionResponse).length;
    if (responses === 0) continue;
    const previous = i > 0 ? body.contents[i - 1] : undefined;
    const calls = previous?.role === "model" ? previous.parts.filter((p: any) => p?.functionCall).length : 0;
    if (calls === 0) {
      return Response.json(geminiErrorBody(400, "Please ensure that function response turn comes immediately after a function call turn."), { status: 400 });
    }
    if (calls !== responses) {
      return Response.json(
        geminiErrorBody(400, "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."),
        { status: 400 },
      );
    }
  }
  return null;
}

/** Starts a loopback Gemini upstream. */
export async function startGeminiUpstream(options: GeminiUpstreamOptions = {}): Promise<GeminiUpstream> {
  const { apiKey, ...initial } = options;
  let behavior: GeminiUpstreamBehavior = { ...DEFAULTS, ...initial };
  const requests: GeminiRecordedRequest[] = [];

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
      const query: Record<string, string> = {};
      url.searchParams.forEach((value, key) => {
        query[key] = value;
      });
      const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
      const recorded: GeminiRecordedRequest = {
        method: req.method,
        path: url.pathname,
        query,
        model: match ? decodeURIComponent(match[1]!) : null,
        action: match ? match[2]! : null,
        headers,
        body,
        rawBody,
      };
      requests.push(recorded);
      const current = behavior;

      if (current.delayMs > 0) await sleep(current.delayMs);
      if (req.method !== "POST" || !match) {
        return Response.json(geminiErrorBody(404, `Requested entity was not found: ${req.method} ${url.pathname}`), { status: 404 });
      }
      const key = headers["x-goog-api-key"] ?? query.key;
      if (!key) return Response.json(geminiErrorBody(403), { status: 403 });
      if (apiKey !== undefined && key !== apiKey) return Response.json(geminiInvalidKeyBody(), { status: 400 });
      if (current.script) return current.script(recorded);
      const invalid = validateBody(body);
      if (invalid) return invalid;
      if (current.status < 200 || current.status > 299) {
        return Response.json(current.errorBody ?? geminiErrorBody(current.status), { status: current.status, headers: current.headers });
      }
      const wantsTools = Array.isArray(body.tools) && body.tools.some((t: any) => (t.functionDeclarations ?? t.function_declarations)?.length > 0);
      if (recorded.action === "streamGenerateContent") {
        const fixture = current.streamFixture ?? (wantsTools ? GEMINI_TOOL_STREAM_FIXTURE : GEMINI_STREAM_FIXTURE);
        if (query.alt === "sse") return replayStream(fixture, current);
        return Response.json(geminiFixtureChunks(fixture), { headers: current.headers });
      }
      const response = current.response ?? jsonFixture(wantsTools ? GEMINI_TOOLS_FIXTURE : GEMINI_PLAIN_FIXTURE);
      return Response.json(response, { status: current.status, headers: current.headers });
    },
  });

  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
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
