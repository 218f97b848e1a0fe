/**
 * Canonical requests and results of the non-chat endpoints. Routes parse the caller's body
 * into these; each upstream kind's adapter turns them into its own wire format and back.
 */
import type { Transcript, TranscriptFormat, TranscriptTask } from "./transcript.ts";

/**
 * One text to embed: a string, or token IDs already encoded with the model's tokenizer (as
 * LangChain's OpenAIEmbeddings sends by default). Only OpenAI-compatible upstreams take IDs.
 */
export type EmbeddingInput = string | readonly number[];

export interface EmbeddingRequest {
  model: string;
  inputs: EmbeddingInput[];
  /** Output size, for models that can shorten their vectors. */
  dimensions?: number;
  /**
   * A Gemini caller's embed requests as sent, one per input (its content's parts, taskType,
   * title, fields Google adds later; the model left out): a gemini channel is sent them whole,
   * as a same-format upstream is, where others get `inputs`.
   */
  native?: { format: "gemini"; requests: readonly Readonly<Record<string, unknown>>[] } | OpenAiEmbeddingFields;
}

/**
 * An OpenAI caller's fields the gateway does not model (`user`, fields OpenAI adds later): an
 * openai channel is sent them beside its own, as a same-format upstream is; others report them.
 */
export interface OpenAiEmbeddingFields {
  format: "openai";
  fields: Readonly<Record<string, unknown>>;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** As the upstream counted them; null when it did not say. */
  inputTokens: number | null;
}

export interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  topN: number;
  returnDocuments: boolean;
}

export interface RerankResult {
  /** Highest relevance first; `index` points into the request's documents. */
  ranking: { index: number; relevanceScore: number }[];
  inputTokens: number | null;
  /** The searches the upstream says it billed (Cohere's meta.billed_units.search_units), when it says. */
  searchUnits?: number | null;
}

/** The qualities an image can be priced at: DALL-E's (the spec's) and GPT image models'. */
export const PRICED_IMAGE_QUALITIES = ["standard", "hd", "low", "medium", "high"] as const;
/** Every quality a caller may ask for: the priced ones, and `auto`, which lets the model choose. */
export const IMAGE_QUALITIES = [...PRICED_IMAGE_QUALITIES, "auto"] as const;
export type ImageQuality = (typeof IMAGE_QUALITIES)[number];

export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  /** `<width>x<height>`, `auto`, or undefined (the caller left it out): the last two leave it to the model. */
  size?: string;
  /**
   * The caller's quality, style and format, each only when asked for: OpenAI's GPT image
   * models refuse `response_format` and `style`, and take other qualities than DALL-E's.
   */
  quality?: ImageQuality;
  style?: "vivid" | "natural";
  /** How the caller wants the images: hosted URLs or the bytes as base64. */
  responseFormat?: "url" | "b64_json";
  /** Drafts a streamed image sends before it is done (0 to 3), when the caller named a number. */
  partialImages?: number;
  /**
   * The caller's fields the gateway does not model (GPT image models' `background`,
   * `output_format`, `moderation`...): sent as they are to an OpenAI-compatible upstream,
   * whose API they are, and reported by any other.
   */
  extraFields: Readonly<Record<string, unknown>>;
}

/** One generated image: a URL where the upstream hosts it, or its bytes. */
export type GeneratedImage = ({ url: string } | { base64: string; mimeType: string }) & { revisedPrompt?: string };

/** The size and quality an upstream says it made its images at (GPT image models say both). */
export interface MadeImages {
  size?: string;
  quality?: string;
}

export interface ImageResult {
  images: GeneratedImage[];
  /** What the upstream says it made, when it says: the charge follows it. */
  made?: MadeImages;
  /**
   * An OpenAI-compatible upstream's answer fields beyond `created` and `data` (GPT image
   * models' `usage`, `size`, `quality`, `output_format`, `background`), passed on as they came.
   */
  answerFields?: Readonly<Record<string, unknown>>;
}

export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export interface SpeechRequest {
  model: string;
  input: string;
  /** A voice name, or the id of a custom voice (OpenAI's `{"id": ...}`). */
  voice: string | { id: string };
  format: SpeechFormat;
  speed: number;
  /** How to speak (tone, accent, pace), for models that take it (gpt-4o-mini-tts). */
  instructions?: string;
  /** The caller's fields the gateway does not model: sent as they are to an OpenAI-compatible upstream, named in a warning by the demo voice. */
  extraFields: Readonly<Record<string, unknown>>;
}

/**
 * Where a streamed media answer is whole: once `count` events of `type` have come. Its events
 * are OpenAI's (speech.audio.*, transcript.text.*, image_generation.*): the one format every
 * caller of these endpoints and every upstream that streams them speaks, so they are relayed as
 * they came.
 */
export interface MediaStreamEnd {
  type: string;
  /** More than one for several images, each of which ends on its own completed event. */
  count: number;
}

/** The end of speech streamed as events (`stream_format: "sse"`). */
export const SPEECH_STREAM_END: MediaStreamEnd = { type: "speech.audio.done", count: 1 };

/** The end of a streamed transcription (`stream=true`). */
export const TRANSCRIPT_STREAM_END: MediaStreamEnd = { type: "transcript.text.done", count: 1 };

/** The type of the event that ends each streamed image. */
export const IMAGE_COMPLETED = "image_generation.completed";

/** The end of `n` images streamed (`stream: true`): each ends on its own completed event. */
export const imageStreamEnd = (n: number): MediaStreamEnd => ({ type: IMAGE_COMPLETED, count: n });

export interface SpeechResult {
  /** The audio as the upstream sends it, not buffered. */
  body: ReadableStream<Uint8Array>;
  contentType: string;
}

/** A received audio upload: a temp file read as often as failover needs. */
export interface AudioUpload {
  filename: string;
  contentType: string;
  size: number;
  /** A fresh stream of the whole file. */
  open(): ReadableStream<Uint8Array>;
  read(offset: number, length: number): Promise<Uint8Array>;
  /** From the file's own header. */
  durationSeconds: number;
}

export interface TranscriptionRequest {
  model: string;
  /** `translate` always answers in English. */
  task: TranscriptTask;
  file: AudioUpload;
  language?: string;
  prompt?: string;
  responseFormat: TranscriptFormat;
  temperature?: number;
  /**
   * The caller's form fields the gateway does not model (`timestamp_granularities[]`,
   * `include[]`, `chunking_strategy`...), in body order with repeats: sent as they are to an
   * OpenAI-compatible upstream, whose API they are, and reported by any other.
   */
  extraFields: readonly (readonly [string, string])[];
}

/** A transcript, either as the upstream rendered it or as a canonical one the gateway renders. */
export type TranscriptionResult =
  | { kind: "rendered"; body: string; contentType: string; durationSeconds: number | null }
  | { kind: "transcript"; transcript: Transcript };
