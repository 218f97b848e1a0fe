import { createHash } from "node:crypto";
import { expect } from "bun:test";
import { encodeWav } from "../../src/audio/encode-wav.ts";
import { encodeMp3Silence } from "../../src/audio/encode-mp3-silence.ts";
import { speechDurationSeconds, synthesizeSpeechSamples } from "../../src/audio/synthesize-speech-samples.ts";
import { sleep } from "./common.ts";
import type { TestGateway } from "./gateway.ts";
import { openAiErrorBody } from "./openai-upstream.ts";
import { BEHAVIOR_DEFAULTS, replaySse, type LoopbackBehavior } from "./loopback-upstream.ts";

/**
 * A loopback OpenAI-compatible upstream for the non-chat endpoints (Bun.serve on 127.0.0.1,
 * port 0; its `url` ends in /v1 like a channel's base_url): POST /v1/embeddings, /v1/rerank
 * (Cohere/Jina style), /v1/images/generations, /v1/audio/speech (streamed in chunks) and
 * /v1/audio/transcriptions + /v1/audio/translations (multipart, read with request.formData()).
 * Asked to stream (speech's `stream_format: "sse"`, a transcription's `stream=true`, images'
 * `stream: true`), it replays a recorded SSE fixture event by event, as the chat upstreams do;
 * like OpenAI, it ignores `stream` for whisper-1 and answers that transcript whole.
 *
 * Every request is recorded (path, headers, JSON body or multipart fields and the file's
 * size and SHA-256). `failNext(n, status)` answers the next n requests with an OpenAI error
 * body. What it answers is computed by the exported functions below, so tests compare the
 * gateway's output with values derived independently of the gateway's code.
 *
 * (startLoopbackUpstream reads every body as text, which would corrupt binary uploads, so
 * this server is its own.)
 */

export interface UploadedFile {
  name: string;
  /** The Content-Type line of the file's part, as sent (Bun's formData() rewrites some, e.g. audio/wav). */
  type: string;
  size: number;
  sha256: string;
}

export interface MediaRequest {
  method: string;
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The parsed JSON body; undefined for multipart or non-JSON bodies. */
  body: any;
  /** Multipart text fields (transcriptions and translations); a repeated name keeps its last value. */
  fields: Record<string, string>;
  /** The same fields in body order, repeats included (`timestamp_granularities[]`). */
  fieldEntries: [string, string][];
  file: UploadedFile | null;
}

/** The recorded event streams the upstream replays. */
export const STREAM_FIXTURES = { speech: "openai-speech-stream.sse", transcription: "openai-transcription-stream.sse", images: "openai-image-stream.sse" } as const;

/** How an event stream is replayed (see LoopbackBehavior). */
type StreamReplay = Pick<LoopbackBehavior, "chunkDelayMs" | "cutAfterEvents" | "streamEnd" | "dropWhen" | "byteChunkSize">;

export interface MediaBehavior extends StreamReplay {
  /** Image answers: by the request's response_format (default), or always one kind. */
  imageFormat: "as-requested" | "url" | "b64_json";
  /**
   * Whether image answers give a revised_prompt, as DALL-E 3 does (default); DALL-E 2 and GPT
   * image models give none. "null" sends every field not given as null (revised_prompt, and url
   * or b64_json), as some OpenAI-compatible servers do.
   */
  revisedPrompt: boolean | "null";
  /** Embedding answers: by the request's encoding_format (default), or always one encoding. */
  embeddingEncoding: "as-requested" | "float" | "base64";
  /** Speech bodies are sent in this many chunks. */
  speechChunks: number;
  /** Wait between two speech chunks. */
  speechChunkDelayMs: number;
  /** Answers the request itself, replacing the upstream's answer. */
  script?: (request: MediaRequest) => Response | Promise<Response>;
}

const DEFAULTS: MediaBehavior = {
  imageFormat: "as-requested",
  revisedPrompt: true,
  embeddingEncoding: "as-requested",
  speechChunks: 4,
  speechChunkDelayMs: 0,
  chunkDelayMs: BEHAVIOR_DEFAULTS.chunkDelayMs,
  streamEnd: BEHAVIOR_DEFAULTS.streamEnd,
  byteChunkSize: BEHAVIOR_DEFAULTS.byteChunkSize,
};

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

export interface MediaUpstream {
  /** http://127.0.0.1:{port}/v1 */
  url: string;
  requests: MediaRequest[];
  /** Progress of the latest speech answer. */
  speech: { chunksSent: number; chunksTotal: number };
  setBehavior(next: Partial<MediaBehavior>): void;
  /** The next `count` requests get `status` with an OpenAI-style error body. */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** Clears recorded requests, pending failures and the behaviour. */
  reset(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// What the upstream answers (deterministic, independent of the gateway)

export const sha256Hex = (bytes: Uint8Array | ArrayBuffer) => createHash("sha256").update(new Uint8Array(bytes)).digest("hex");

/** The vector the upstream returns for `text`: 8 values that are not exactly float32. */
export function upstreamEmbedding(input: string | number[]): number[] {
  const text = typeof input === "string" ? input : input.join(",");
  let seed = 0;
  for (const ch of text) seed = (seed * 31 + ch.codePointAt(0)!) % 1_000_003;
  return Array.from({ length: 8 }, (_, i) => Math.sin(seed + i * 1.7) / 3);
}

/** The prompt_tokens the upstream reports: deliberately unlike any estimate. */
export const upstreamPromptTokens = (inputs: (string | number[])[]) => 1000 + inputs.reduce((sum, input) => sum + input.length, 0);

const words = (text: string) => text.toLowerCase().split(/\W+/).filter(Boolean);

/** The upstream's relevance score: shared words over document words, plus a length tie-breaker. */
export function upstreamRerankScore(query: string, document: string): number {
  const q = new Set(words(query));
  const d = words(document);
  const shared = d.filter((w) => q.has(w)).length;
  return shared / (d.length + 1) + document.length / 1e6;
}

export const upstreamRerankTokens = (query: string, documents: string[]) => 500 + query.length + documents.join("").length;

export const upstreamImageUrl = (i: number) => `https://images.upstream.test/generated-${i}.png`;
export const upstreamRevisedPrompt = (prompt: string) => `A detailed rendering of: ${prompt}`;
/** A 1x1 transparent PNG. */
/** The first bytes of a JPEG (SOI, JFIF APP0), as a GPT image model answers output_format "jpeg". */
export const JPEG_HEAD_BASE64 = "/9j/4AAQSkZJRgABAQAAAQABAAD/";
export const TINY_PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** The Content-Type the upstream sends per speech format (audio/opus is not the gateway's fallback). */
export const UPSTREAM_SPEECH_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

/** The audio the upstream speaks: a real WAV or MP3; other formats are marked bytes. */
export function upstreamSpeechBytes(input: string, format: string): Uint8Array {
  if (format === "wav") return encodeWav(synthesizeSpeechSamples(input, 1, 16_000), 16_000);
  if (format === "mp3") return encodeMp3Silence(speechDurationSeconds(input, 1));
  const body = new Uint8Array(4096 + input.length);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7 + input.length) & 0xff;
  body.set(new TextEncoder().encode(`${format}:`), 0);
  return body;
}

export const UPSTREAM_TRANSCRIPT_SECONDS = 3.25;

/** The text the upstream transcribes (or translates) a file to. */
export function upstreamTranscriptText(task: "transcribe" | "translate", file: { name: string; size: number }): string {
  return `${task === "translate" ? "Translated" : "Transcribed"} ${file.size} bytes of ${file.name}`;
}

const PLAIN = "text/plain; charset=utf-8";

/** The body and Content-Type the upstream answers a transcript with, per response_format (OpenAI's shapes). */
export function upstreamTranscriptBody(text: string, format: string, task: string): { body: string; contentType: string } {
  const cue = (sep: string) => `00:00:00${sep}000 --> 00:00:03${sep}250`;
  switch (format) {
    case "text":
      return { body: `${text}\n`, contentType: PLAIN };
    case "srt":
      return { body: `1\n${cue(",")}\n${text}\n\n`, contentType: PLAIN };
    case "vtt":
      return { body: `WEBVTT\n\n${cue(".")}\n${text}\n\n`, contentType: PLAIN };
    case "verbose_json": {
      const segment = { id: 0, seek: 0, start: 0, end: UPSTREAM_TRANSCRIPT_SECONDS, text: ` ${text}`, tokens: [1, 2, 3], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 };
      return { body: JSON.stringify({ task, language: "english", duration: UPSTREAM_TRANSCRIPT_SECONDS, text, segments: [segment] }), contentType: "application/json" };
    }
    case "diarized_json": {
      const segment = { type: "transcript.text.segment", id: "seg_0", start: 0, end: UPSTREAM_TRANSCRIPT_SECONDS, text, speaker: "agent" };
      return { body: JSON.stringify({ task, duration: UPSTREAM_TRANSCRIPT_SECONDS, text, segments: [segment], usage: { type: "duration", seconds: 4 } }), contentType: "application/json" };
    }
    default:
      return { body: JSON.stringify({ text }), contentType: "application/json" };
  }
}

/** The Content-Type header of the part named "file" in a raw multipart body. */
function filePartType(raw: Uint8Array): string | null {
  const text = Buffer.from(raw).toString("latin1");
  const at = text.search(/content-disposition: form-data; name="file"/i);
  if (at < 0) return null;
  const headerBlock = text.slice(at, text.indexOf("\r\n\r\n", at));
  return /\r\ncontent-type:\s*([^\r\n]+)/i.exec(headerBlock)?.[1]?.trim() ?? null;
}

function floatBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString("base64");
}

function speechStream(bytes: Uint8Array, behavior: MediaBehavior, progress: MediaUpstream["speech"]): ReadableStream<Uint8Array> {
  const size = Math.ceil(bytes.length / behavior.speechChunks);
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.slice(at, at + size));
  progress.chunksSent = 0;
  progress.chunksTotal = pieces.length;
  let next = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (next > 0 && behavior.speechChunkDelayMs > 0) await sleep(behavior.speechChunkDelayMs);
        if (next >= pieces.length) return controller.close();
        controller.enqueue(pieces[next++]!);
        progress.chunksSent = next;
      },
    },
    { highWaterMark: 0 },
  );
}

// ---------------------------------------------------------------------------------------------
// The server

export function startOpenAiMediaUpstream(initial: Partial<MediaBehavior> = {}): MediaUpstream {
  let behavior: MediaBehavior = { ...DEFAULTS, ...initial };
  let failures: { count: number; status: number; headers: Record<string, string> } | null = null;
  const requests: MediaRequest[] = [];
  const speech = { chunksSent: 0, chunksTotal: 0 };

  async function record(req: Request): Promise<MediaRequest> {
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.headers.forEach((value, key) => {
      headers[key.toLowerCase()] = value;
    });
    const recorded: MediaRequest = { method: req.method, path: url.pathname, headers, body: undefined, fields: {}, fieldEntries: [], file: null };
    if ((headers["content-type"] ?? "").startsWith("multipart/form-data")) {
      const raw = new Uint8Array(await req.arrayBuffer());
      const form = await new Request(req.url, { method: "POST", headers: { "content-type": headers["content-type"]! }, body: raw }).formData();
      for (const [name, value] of form.entries() as Iterable<[string, string | File]>) {
        if (typeof value === "string") {
          recorded.fields[name] = value;
          recorded.fieldEntries.push([name, value]);
        } else recorded.file = { name: value.name, type: filePartType(raw) ?? value.type, size: value.size, sha256: sha256Hex(await value.arrayBuffer()) };
      }
    } else {
      const text = await req.text();
      try {
        recorded.body = text ? JSON.parse(text) : undefined;
      } catch {
        recorded.body = undefined;
      }
    }
    return recorded;
  }

  function answer(request: MediaRequest): Response | Promise<Response> {
    if (behavior.script) return behavior.script(request);
    const { path, body } = request;
    const replay = (name: string) => replaySse(name, behavior, SSE_HEADERS);
    if (path === "/v1/embeddings") {
      // OpenAI's four input forms: a text, texts, one token-ID array, token-ID arrays.
      const single = typeof body.input === "string" || typeof body.input[0] === "number";
      const inputs: (string | number[])[] = single ? [body.input] : body.input;
      const encoding = behavior.embeddingEncoding === "as-requested" ? (body.encoding_format ?? "float") : behavior.embeddingEncoding;
      const data = inputs.map((text, index) => {
        const vector = upstreamEmbedding(text);
        return { object: "embedding", index, embedding: encoding === "base64" ? floatBase64(vector) : vector };
      });
      const tokens = upstreamPromptTokens(inputs);
      return Response.json({ object: "list", data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    }
    if (path === "/v1/rerank") {
      const docs: string[] = body.documents;
      const scored = docs.map((doc, index) => ({ index, relevance_score: upstreamRerankScore(body.query, doc) }));
      const best = [...scored].sort((a, b) => b.relevance_score - a.relevance_score).slice(0, body.top_n ?? docs.length);
      // Answered in document order, not by score: ordering is the gateway's job.
      const results = best.sort((a, b) => a.index - b.index);
      return Response.json({ id: "rerank-upstream", results, usage: { total_tokens: upstreamRerankTokens(body.query, docs) } });
    }
    if (path === "/v1/images/generations") {
      if (body.stream === true) return replay(STREAM_FIXTURES.images);
      const format = behavior.imageFormat === "as-requested" ? (body.response_format ?? "url") : behavior.imageFormat;
      const nulls = behavior.revisedPrompt === "null";
      const revised = nulls ? { revised_prompt: null } : behavior.revisedPrompt ? { revised_prompt: upstreamRevisedPrompt(body.prompt) } : {};
      const data = Array.from({ length: body.n ?? 1 }, (_, i) =>
        format === "b64_json"
          ? { b64_json: body.output_format === "jpeg" ? JPEG_HEAD_BASE64 : TINY_PNG_BASE64, ...revised, ...(nulls ? { url: null } : {}) }
          : { url: upstreamImageUrl(i), ...revised, ...(nulls ? { b64_json: null } : {}) },
      );
      // A model that answers in bytes unasked is a GPT image model: it says what it made, and its token usage.
      const gptImage = behavior.imageFormat === "b64_json" ? upstreamGptImageFields(body) : {};
      return Response.json({ created: 1_700_000_000, data, ...gptImage });
    }
    if (path === "/v1/audio/speech") {
      if (body.stream_format === "sse") return replay(STREAM_FIXTURES.speech);
      const format = body.response_format ?? "mp3";
      const bytes = upstreamSpeechBytes(body.input, format);
      return new Response(speechStream(bytes, behavior, speech), { headers: { "content-type": UPSTREAM_SPEECH_TYPES[format] ?? "application/octet-stream" } });
    }
    if (path === "/v1/audio/transcriptions" || path === "/v1/audio/translations") {
      if (!request.file) return Response.json({ error: { message: "file is required", type: "invalid_request_error", param: "file", code: null } }, { status: 400 });
      const task = path.endsWith("translations") ? "translate" : "transcribe";
      if (request.fields.stream === "true" && request.fields.model !== "whisper-1") return replay(STREAM_FIXTURES.transcription);
      const { body: text, contentType } = upstreamTranscriptBody(upstreamTranscriptText(task, request.file), request.fields.response_format ?? "json", task);
      return new Response(text, { headers: { "content-type": contentType } });
    }
    return Response.json({ error: { message: `Invalid URL (${request.method} ${path})`, type: "invalid_request_error", param: null, code: null } }, { status: 404 });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const request = await record(req);
      requests.push(request);
      if (failures && failures.count > 0) {
        failures.count--;
        return Response.json(openAiErrorBody(failures.status), { status: failures.status, headers: failures.headers });
      }
      return answer(request);
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests,
    speech,
    setBehavior(next) {
      behavior = { ...DEFAULTS, ...next };
    },
    failNext(count, status, headers = {}) {
      failures = { count, status, headers };
    },
    reset() {
      requests.length = 0;
      failures = null;
      behavior = { ...DEFAULTS, ...initial };
    },
    async close() {
      await server.stop(true);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Gateway-side set-up shared by the media tests

/** The five endpoint families, their price mode and a price that fits. */
export const FAMILY_PRICES = {
  embeddings: { mode: "embedding", input_per_million: 0.02 },
  rerank: { mode: "rerank", per_1k_documents: 0.05 },
  images: { mode: "image", per_image: 0.04 },
  speech: { mode: "speech", per_1k_characters: 0.015 },
  transcriptions: { mode: "transcription", per_minute: 0.006 },
} as const;
export type Family = keyof typeof FAMILY_PRICES;
export const FAMILIES = Object.keys(FAMILY_PRICES) as Family[];

/** POST /v1/admin/channels; expects 201 and returns the id. */
export async function createChannel(gw: TestGateway, fields: Record<string, unknown>): Promise<string> {
  const created = await gw.admin("POST", "/v1/admin/channels", fields);
  expect(created.status).toBe(201);
  return created.body.id;
}

/** Prices `model` for `family` (which also makes it a model of that endpoint). */
export async function priceModel(gw: TestGateway, model: string, family: Family): Promise<void> {
  const set = await gw.admin("POST", "/v1/admin/prices", { model, ...FAMILY_PRICES[family] });
  expect(set.status).toBe(200);
}

/** The usage rows of one request (by x-request-id); waits up to 2 s for `count` of them (a speech row lands when its body ends). */
export async function usageRowsOf(gw: TestGateway, requestId: string, count = 1): Promise<any[]> {
  let rows: any[] = [];
  for (let tries = 0; tries < 40; tries++) {
    const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
    expect(listed.status).toBe(200);
    rows = listed.body.usage.filter((r: any) => r.request_id === requestId);
    if (rows.length >= count) break;
    await sleep(50);
  }
  return rows;
}

/** JSON POST to the gateway with an API key. */
export function postJson(gw: TestGateway, key: string, path: string, body: unknown): Promise<Response> {
  return gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** A multipart upload (file + text fields) to the gateway with an API key. */
export function postUpload(gw: TestGateway, key: string, path: string, file: { bytes: Uint8Array; name: string; type?: string }, fields: Record<string, string> | [string, string][]): Promise<Response> {
  const form = new FormData();
  // Pairs for a field that repeats (`known_speaker_names[]`).
  for (const [name, value] of Array.isArray(fields) ? fields : Object.entries(fields)) form.append(name, value);
  form.append("file", new File([file.bytes as Uint8Array<ArrayBuffer>], file.name, { type: file.type ?? "audio/wav" }));
  return gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
}

/** A real WAV file of speech-like audio for `text` (16 kHz mono), for transcription uploads. */
export function speechWav(text: string, sampleRate = 16_000): Uint8Array {
  return encodeWav(synthesizeSpeechSamples(text, 1, sampleRate), sampleRate);
}

/** Seconds of audio in a canonical 44-byte-header PCM WAV, from its own header. */
export function wavSeconds(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.getUint32(40, true) / view.getUint32(28, true);
}

/** RIFF....WAVE */
export function isWav(bytes: Uint8Array): boolean {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  return bytes.length > 44 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE";
}

/** Starts with an MPEG audio frame sync (11 set bits), or an ID3v2 tag. */
export function isMp3(bytes: Uint8Array): boolean {
  if (bytes.length < 4) return false;
  if (String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!) === "ID3") return true;
  return bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0;
}

/** Reads a whole body. */
export async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

/** The fields a GPT image model's answer has beside `data`, as OpenAI's images API documents them. */
export function upstreamGptImageFields(body: { size?: string; quality?: string; output_format?: string; background?: string }) {
  return {
    background: body.background ?? "opaque",
    output_format: body.output_format ?? "png",
    // Left to the model, it says what it chose.
    quality: body.quality && body.quality !== "auto" ? body.quality : "high",
    size: body.size && body.size !== "auto" ? body.size : "1024x1024",
    usage: { input_tokens: 12, input_tokens_details: { image_tokens: 0, text_tokens: 12 }, output_tokens: 4160, total_tokens: 4172 },
  };
}
