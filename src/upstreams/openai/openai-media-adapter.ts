import * as v from "valibot";
import type { EventsAnswer, MediaAdapter, UpstreamCall } from "../adapter.ts";
import { imageStreamEnd, SPEECH_STREAM_END, TRANSCRIPT_STREAM_END, type GeneratedImage, type ImageRequest, type MediaStreamEnd, type SpeechFormat, type SpeechRequest, type TranscriptionRequest, type TranscriptionResult } from "../../canonical/media.ts";
import { encodeMultipart } from "../../multipart/encode-multipart.ts";
import { parseVerboseTranscript } from "../../translate/transcription/render-transcript.ts";
import { isJsonTranscriptFormat, type Transcript } from "../../canonical/transcript.ts";
import { decodeFloat32Base64 } from "../../lib/float32-base64.ts";
import { postJson, postToUpstream } from "../http.ts";
import { readJsonAs, readText } from "../read-body.ts";
import { UpstreamError } from "../upstream-error.ts";
import { eventStreamBody, firstContentType, mediaTypeOf, wrongKindOfBody } from "../content-type.ts";
import { readSseBody } from "../../streams/sse.ts";
import { decodeOpenAiMediaEvents } from "../../translate/openai-media/decode-media-events.ts";
import { madeImagesOf } from "../../translate/openai-media/made-images.ts";
import { believableUsage, nullAsAbsent, TokenCountSchema } from "../../lib/schemas.ts";
import { openAiAuthHeaders } from "./openai-auth.ts";
import { jsonOrUndefined } from "../../lib/parse-json.ts";

// Lenient upstream schemas: only the fields used (STYLE.md habit 3).
const EmbeddingsSchema = v.object({
  data: v.array(v.object({ index: nullAsAbsent(v.number()), embedding: v.union([v.array(v.number()), v.string()]) })),
  usage: believableUsage(v.object({ prompt_tokens: v.optional(TokenCountSchema) })),
});
const RerankSchema = v.object({
  results: v.array(v.object({ index: v.number(), relevance_score: v.number() })),
  // Jina reports usage.total_tokens, Cohere-style servers meta.billed_units, the spec meta.tokens_used.
  usage: believableUsage(v.object({ total_tokens: v.optional(TokenCountSchema) })),
  meta: believableUsage(
    v.object({ tokens_used: v.optional(TokenCountSchema), billed_units: v.optional(v.object({ input_tokens: v.optional(TokenCountSchema), search_units: v.optional(TokenCountSchema) })) }),
  ),
});
const ImagesSchema = v.looseObject({
  data: v.array(v.object({ url: nullAsAbsent(v.string()), b64_json: nullAsAbsent(v.string()), revised_prompt: nullAsAbsent(v.string()) })),
});

/** The Content-Type of each speech format, for upstreams that send none. */
export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: "audio/mpeg",
  opus: "audio/ogg",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

const post = (call: UpstreamCall, path: string, body: unknown) =>
  postJson(call, `${call.channel.baseUrl}${path}`, openAiAuthHeaders(call), body);

/** A base64 vector from an upstream that ignored encoding_format, or a protocol error. */
function decodeBase64Vector(text: string): number[] {
  try {
    return decodeFloat32Base64(text);
  } catch {
    throw new UpstreamError("protocol", "upstream sent an embedding that is neither numbers nor base64");
  }
}

/** A json or verbose_json transcript as the API sends it, JSON with a string `text`, or a protocol error. */
function parseJsonTranscript(text: string): { transcript: Transcript; billedSeconds: number | null } {
  const json = jsonOrUndefined(text);
  if (json === undefined) throw new UpstreamError("protocol", "upstream sent a transcript that is not JSON");
  const transcript = parseVerboseTranscript(json);
  if (!transcript) throw new UpstreamError("protocol", `upstream sent ${isErrorObject(json) ? "an error object" : "a transcript without text"}`);
  return { transcript, billedSeconds: billedSecondsIn(json) };
}

/**
 * The seconds an OpenAI transcript's `usage` says were billed (whisper-1 answers
 * `{"type": "duration", "seconds": 4}` for 3.25 s of audio: whole seconds), else null.
 */
function billedSecondsIn(json: unknown): number | null {
  const usage = (json as { usage?: { type?: unknown; seconds?: unknown } }).usage;
  const seconds = usage?.type === "duration" ? usage.seconds : undefined;
  return typeof seconds === "number" && Number.isFinite(seconds) ? seconds : null;
}

/**
 * Whether a 200's JSON is OpenAI's error shape (`{"error": {...}}`). Its message is not
 * repeated: the caller sees the gateway's 502, and an upstream may echo what it was sent.
 */
function isErrorObject(json: unknown): boolean {
  const error = (json as { error?: unknown } | null)?.error;
  return error !== undefined && error !== null;
}

/**
 * A 200 in JSON where a transcript in text, SRT or VTT was asked for: an error object some
 * servers answer with 200, which is not a transcript to pass on and bill. Other JSON goes on
 * as it came.
 */
function refuseJsonError(text: string): void {
  if (isErrorObject(jsonOrUndefined(text))) throw new UpstreamError("protocol", "upstream answered 200 with an error object instead of a transcript");
}

/** The first of several optional counts that is present. */
const firstCount = (...counts: (number | undefined)[]) => counts.find((n) => n !== undefined) ?? null;

/**
 * The type of base64 image bytes, by their first bytes: GPT image models answer PNG, JPEG or
 * WebP, as the caller's output_format asks, where DALL-E answers PNG.
 */
function imageTypeOfBase64(base64: string): string {
  if (base64.startsWith("/9j/")) return "image/jpeg";
  if (base64.startsWith("UklGR")) return "image/webp";
  return "image/png";
}

/**
 * An image request as OpenAI's API takes it, with the caller's fields the gateway does not
 * model. A field the caller did not ask for is undefined, which JSON leaves out: GPT image
 * models refuse response_format and style.
 */
function imagesBody(request: ImageRequest, call: UpstreamCall) {
  return {
    ...request.extraFields,
    model: call.upstreamModel,
    prompt: request.prompt,
    n: request.n,
    size: request.size,
    quality: request.quality,
    style: request.style,
    response_format: request.responseFormat,
    partial_images: request.partialImages,
  };
}

/** A speech request as OpenAI's API takes it, with the caller's fields the gateway does not model; what the caller left out stays undefined, which JSON leaves out. */
function speechBody(request: SpeechRequest, call: UpstreamCall) {
  return {
    ...request.extraFields,
    model: call.upstreamModel,
    input: request.input,
    voice: request.voice,
    response_format: request.format,
    speed: request.speed,
    instructions: request.instructions,
  };
}

/** A 2xx answer streamed as OpenAI's media events, each relayed as it came, until `end`. */
function readMediaEvents(response: Response, end: MediaStreamEnd, call: UpstreamCall): EventsAnswer {
  return { kind: "events", events: readSseBody(eventStreamBody(response), decodeOpenAiMediaEvents(end), call.signal, call.maxBodyBytes) };
}

/**
 * The non-chat endpoints of any OpenAI-compatible API at the channel's base URL (which
 * includes /v1); rerank is the Cohere/Jina-style /rerank such servers expose.
 */
export const openAiMediaAdapter: MediaAdapter = {
  async embed(request, call) {
    const callerFields = request.native?.format === "openai" ? request.native.fields : {};
    const body: Record<string, unknown> = { ...callerFields, model: call.upstreamModel, input: request.inputs, encoding_format: "float" };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    const json = await readJsonAs(await post(call, "/embeddings", body), call, EmbeddingsSchema, "embeddings");
    if (json.data.length !== request.inputs.length) throw new UpstreamError("protocol", "upstream sent a different number of embeddings than inputs");
    const vectors: (number[] | undefined)[] = new Array(request.inputs.length);
    json.data.forEach((item, position) => {
      const index = item.index ?? position;
      // Each input exactly once: an index out of range or seen twice would leave a hole.
      if (!Number.isInteger(index) || index < 0 || index >= vectors.length || vectors[index] !== undefined) {
        throw new UpstreamError("protocol", "upstream sent embeddings whose indices do not match the inputs");
      }
      vectors[index] = typeof item.embedding === "string" ? decodeBase64Vector(item.embedding) : item.embedding;
    });
    return { vectors: vectors as number[][], inputTokens: json.usage?.prompt_tokens ?? null };
  },

  async rerank(request, call) {
    const body = { model: call.upstreamModel, query: request.query, documents: request.documents, top_n: request.topN, return_documents: false };
    const json = await readJsonAs(await post(call, "/rerank", body), call, RerankSchema, "a rerank result");
    // Each document at most once, and only documents that exist.
    const seen = new Set<number>();
    const ranking = json.results
      .filter((r) => Number.isInteger(r.index) && r.index >= 0 && r.index < request.documents.length && !seen.has(r.index) && seen.add(r.index))
      .map((r) => ({ index: r.index, relevanceScore: r.relevance_score }));
    return {
      ranking,
      inputTokens: firstCount(json.meta?.tokens_used, json.usage?.total_tokens, json.meta?.billed_units?.input_tokens),
      searchUnits: json.meta?.billed_units?.search_units ?? null,
    };
  },

  async generateImages(request, call) {
    const json = await readJsonAs(await post(call, "/images/generations", imagesBody(request, call)), call, ImagesSchema, "an image result");
    const images = json.data.map((item): GeneratedImage | null => {
      const revised = item.revised_prompt === undefined ? {} : { revisedPrompt: item.revised_prompt };
      if (item.b64_json) return { base64: item.b64_json, mimeType: imageTypeOfBase64(item.b64_json), ...revised };
      return item.url ? { url: item.url, ...revised } : null;
    });
    if (images.length === 0 || images.some((image) => image === null)) throw new UpstreamError("protocol", "upstream sent an image without url or data");
    const { data: _data, created: _created, ...answerFields } = json;
    return { images: images as GeneratedImage[], made: madeImagesOf(json), answerFields };
  },

  async streamImages(request, call) {
    const response = await post(call, "/images/generations", { ...imagesBody(request, call), stream: true });
    return readMediaEvents(response, imageStreamEnd(request.n), call);
  },

  async speak(request, call) {
    const response = await post(call, "/audio/speech", speechBody(request, call));
    if (!response.body) throw new UpstreamError("protocol", "upstream sent no audio");
    const contentType = firstContentType(response.headers.get("content-type")) ?? SPEECH_CONTENT_TYPES[request.format];
    const mediaType = mediaTypeOf(contentType);
    // An error object or page with a 200 status is no audio; some servers label audio octet-stream.
    if (!mediaType.startsWith("audio/") && mediaType !== "application/octet-stream") throw wrongKindOfBody(response, mediaType, "audio");
    return { body: response.body, contentType };
  },

  async streamSpeech(request, call) {
    const response = await post(call, "/audio/speech", { ...speechBody(request, call), stream_format: "sse" });
    return readMediaEvents(response, SPEECH_STREAM_END, call);
  },

  async transcribe(request, call) {
    return readTranscript(await postTranscription(request, call, []), request, call);
  },

  async streamTranscript(request, call) {
    const response = await postTranscription(request, call, [["stream", "true"]]);
    // Unlabelled is read as a stream too, as a chat stream is.
    const contentType = firstContentType(response.headers.get("content-type"));
    if (contentType === null || mediaTypeOf(contentType) === "text/event-stream") return readMediaEvents(response, TRANSCRIPT_STREAM_END, call);
    // An upstream that ignores `stream` (OpenAI's whisper-1, as its API reference says) answers whole: passed on as OpenAI's is.
    call.answeredWhole?.();
    return readTranscript(response, request, call);
  },
};

/** Posts a transcription or translation upstream as OpenAI's multipart form, with `also` after the fields the gateway models. */
function postTranscription(request: TranscriptionRequest, call: UpstreamCall, also: (readonly [string, string])[]): Promise<Response> {
  const fields: (readonly [string, string])[] = [["model", call.upstreamModel], ["response_format", request.responseFormat]];
  if (request.language !== undefined && request.task === "transcribe") fields.push(["language", request.language]);
  if (request.prompt !== undefined) fields.push(["prompt", request.prompt]);
  if (request.temperature !== undefined) fields.push(["temperature", String(request.temperature)]);
  fields.push(...also, ...request.extraFields);
  const { file } = request;
  const form = encodeMultipart(fields, { field: "file", filename: file.filename, contentType: file.contentType, size: file.size, open: () => file.open() });
  const path = request.task === "translate" ? "/audio/translations" : "/audio/transcriptions";
  const headers = { ...openAiAuthHeaders(call), "content-type": form.contentType, "content-length": String(form.contentLength) };
  return postToUpstream(call, `${call.channel.baseUrl}${path}`, headers, form.body);
}

/** A 2xx transcript answered whole, checked as its format's body (see refuseJsonError, parseJsonTranscript) and passed on as it came. */
async function readTranscript(response: Response, request: TranscriptionRequest, call: UpstreamCall): Promise<TranscriptionResult> {
  const json = isJsonTranscriptFormat(request.responseFormat);
  const contentType = firstContentType(response.headers.get("content-type")) ?? (json ? "application/json" : "text/plain; charset=utf-8");
  // Text, SRT and VTT cannot be told from an error page by their content, only by its label.
  if (!json && mediaTypeOf(contentType) === "text/html") throw wrongKindOfBody(response, "text/html", "a transcript");
  const text = await readText(response, call);
  if (!json) {
    if (mediaTypeOf(contentType) === "application/json") refuseJsonError(text);
    return { kind: "rendered", body: text, contentType, durationSeconds: null };
  }
  // Checked, not rewritten: the caller gets the upstream's body as it was sent.
  const { transcript, billedSeconds } = parseJsonTranscript(text);
  // A json transcript has no duration; its usage may still say what was billed.
  const durationSeconds = billedSeconds ?? (request.responseFormat === "json" ? null : transcript.durationSeconds);
  return { kind: "rendered", body: text, contentType, durationSeconds };
}
