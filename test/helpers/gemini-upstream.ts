import { upstreamEmbedding } from "./openai-media-upstream.ts";
import { isErrorStatus, jsonFixture, replaySse, sseFixtureEvents, startLoopbackUpstream, type LoopbackBehavior, type LoopbackUpstream, type RecordedRequest } from "./loopback-upstream.ts";

/**
 * A loopback Gemini API (generativelanguage) upstream for tests: a real HTTP server
 * (Bun.serve on 127.0.0.1, port 0) answering
 * POST /v1beta/models/{model}:generateContent, :streamGenerateContent and :countTokens in
 * Gemini's wire format.
 *
 * - every request is recorded (method, path, query, model, action, lower-cased headers, parsed body);
 * - it checks what the real API checks first: the path, the key (`x-goog-api-key` or `?key=`;
 *   a wrong one gets Gemini's real answer, a 400 API_KEY_INVALID), non-empty `contents` with
 *   roles user/model, unknown field names at the top level and in generationConfig
 *   (Gemini rejects those with "Unknown name ... Cannot find field"), and that a turn of
 *   functionResponse parts follows a model turn with as many functionCall parts;
 * - with `refusesThinkingLevel` it is a Gemini 2.5 model, refusing a `thinkingLevel`;
 * - :countTokens takes `contents` or a `generateContentRequest` (which must name its model,
 *   `models/...`), checked as above, and answers test/fixtures/gemini-count-tokens.json;
 * - :batchEmbedContents answers each request's text (its parts' joined by newlines) with
 *   upstreamEmbedding's vector, as the OpenAI media upstream embeds it;
 * - non-streaming answers come from test/fixtures/gemini-generate-content*.json;
 * - :streamGenerateContent?alt=sse replays a recorded SSE fixture (test/fixtures/gemini-*.sse,
 *   `data: {GenerateContentResponse}` events separated by CRLF CRLF as Google sends them);
 *   without `alt=sse` it answers the fixture's chunks as one JSON array, as the real API does;
 * - per test, `setBehavior` sets a status + error body, delays, other fixtures, a cut-off
 *   stream, or a `script` that answers the request itself (after the path and key checks).
 *
 * Recording, delays and the SSE replay live in loopback-upstream.ts.
 */

export interface GeminiRecordedRequest extends RecordedRequest {
  /** Query parameters, e.g. { alt: "sse" }. */
  query: Record<string, string>;
  /** The model of the path, e.g. "gemini-2.0-flash"; null for another path. */
  model: string | null;
  /** "generateContent", "streamGenerateContent", "countTokens" or "batchEmbedContents"; null for another path. */
  action: string | null;
}

export interface GeminiUpstreamBehavior extends LoopbackBehavior<GeminiRecordedRequest> {
  /** Non-streaming body; default: the tools fixture when the request declares functions, else the plain one. */
  response?: unknown;
  /** The model is before Gemini 3 (2.5), which thinks by a budget: a `thinkingLevel` gets Gemini's 400 for it. */
  refusesThinkingLevel?: boolean;
}

export interface GeminiUpstreamOptions extends Partial<GeminiUpstreamBehavior> {
  /** When set, a request with another key gets Gemini's 400 API_KEY_INVALID. */
  apiKey?: string;
}

/** `url` is the host root, as a `gemini` channel's base_url, e.g. http://127.0.0.1:40123 */
export type GeminiUpstream = LoopbackUpstream<GeminiRecordedRequest, GeminiUpstreamBehavior>;

export const GEMINI_PLAIN_FIXTURE = "gemini-generate-content.json";
export const GEMINI_TOOLS_FIXTURE = "gemini-generate-content-tools.json";
export const GEMINI_STREAM_FIXTURE = "gemini-stream.sse";
export const GEMINI_TOOL_STREAM_FIXTURE = "gemini-tool-stream.sse";
export const GEMINI_COUNT_FIXTURE = "gemini-count-tokens.json";

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
  return sseFixtureEvents(name).map((event) => JSON.parse(event.data));
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

const SSE_HEADERS = { "content-type": "text/event-stream", "x-content-type-options": "nosniff" };

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

/** Gemini's checks of a countTokens body: its own two fields, and the request it counts checked as generateContent's. */
function validateCountBody(body: any): Response | null {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) return validateBody(body);
  for (const name of Object.keys(body)) {
    if (name !== "contents" && name !== "generateContentRequest") return Response.json(unknownFieldBody("", name), { status: 400 });
  }
  const counted = body.generateContentRequest;
  if (counted === undefined) return validateBody({ contents: body.contents });
  if (typeof counted?.model !== "string" || !counted.model.startsWith("models/")) {
    return Response.json(geminiErrorBody(400, "* GenerateContentRequest.model: unexpected model name format\n"), { status: 400 });
  }
  return validateBody(counted);
}

/** A batchEmbedContents answer: a vector for each request's text. */
function embedEach(body: any): Response {
  const embeddings = body.requests.map((request: any) => ({ values: upstreamEmbedding(request.content.parts.map((part: any) => part.text).join("\n")) }));
  return Response.json({ embeddings });
}

/** The request as recorded, with Gemini's query, model and action. */
function recordGemini(request: RecordedRequest, url: URL): GeminiRecordedRequest {
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|batchEmbedContents)$/.exec(url.pathname);
  return { ...request, query, model: match ? decodeURIComponent(match[1]!) : null, action: match ? match[2]! : null };
}

/** Starts a loopback Gemini upstream. */
export async function startGeminiUpstream(options: GeminiUpstreamOptions = {}): Promise<GeminiUpstream> {
  const { apiKey, ...initial } = options;
  return startLoopbackUpstream<GeminiRecordedRequest, GeminiUpstreamBehavior>({
    initial,
    record: recordGemini,
    answer(request, current) {
      const { method, path, headers, query, body } = request;
      if (method !== "POST" || request.action === null) {
        return Response.json(geminiErrorBody(404, `Requested entity was not found: ${method} ${path}`), { status: 404 });
      }
      const key = headers["x-goog-api-key"] ?? query.key;
      if (!key) return Response.json(geminiErrorBody(403), { status: 403 });
      if (apiKey !== undefined && key !== apiKey) return Response.json(geminiInvalidKeyBody(), { status: 400 });
      if (current.script) return current.script(request);
      if (request.action === "batchEmbedContents") return embedEach(body);
      const invalid = request.action === "countTokens" ? validateCountBody(body) : validateBody(body);
      if (invalid) return invalid;
      if (current.refusesThinkingLevel && body.generationConfig?.thinkingConfig?.thinkingLevel !== undefined) {
        return Response.json(geminiErrorBody(400, "Thinking level is not supported for this model."), { status: 400 });
      }
      if (isErrorStatus(current.status)) {
        return Response.json(current.errorBody ?? geminiErrorBody(current.status), { status: current.status, headers: current.headers });
      }
      if (request.action === "countTokens") return Response.json(jsonFixture(GEMINI_COUNT_FIXTURE), { headers: current.headers });
      const wantsTools = Array.isArray(body.tools) && body.tools.some((t: any) => (t.functionDeclarations ?? t.function_declarations)?.length > 0);
      if (request.action === "streamGenerateContent") {
        const fixture = current.streamFixture ?? (wantsTools ? GEMINI_TOOL_STREAM_FIXTURE : GEMINI_STREAM_FIXTURE);
        if (query.alt === "sse") return replaySse(fixture, current, SSE_HEADERS);
        return Response.json(geminiFixtureChunks(fixture), { headers: current.headers });
      }
      const response = current.response ?? jsonFixture(wantsTools ? GEMINI_TOOLS_FIXTURE : GEMINI_PLAIN_FIXTURE);
      return Response.json(response, { status: current.status, headers: current.headers });
    },
  });
}
