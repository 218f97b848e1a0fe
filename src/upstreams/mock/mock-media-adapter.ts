import type { MediaAdapter, UpstreamCall } from "../adapter.ts";
import type { ImageRequest, SpeechRequest, TranscriptionRequest } from "../../canonical/media.ts";
import type { Transcript, TranscriptFormat } from "../../canonical/transcript.ts";
import type { UpstreamWarnings } from "../warnings.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { bytesToBase64 } from "../../lib/base64.ts";
import { estimateEmbeddingTokens } from "../../canonical/estimate-prompt-tokens.ts";
import { SPEECH_CONTENT_TYPES } from "../openai/openai-media-adapter.ts";
import { UpstreamError } from "../upstream-error.ts";
import { DEFAULT_MOCK_EMBEDDING_DIMENSIONS, embedText } from "./mock-embedding.ts";
import { scoreDocumentsBm25 } from "./mock-rerank.ts";
import { mockSpeech } from "./mock-speech.ts";
import { mockImageEvents, mockSpeechEvents, mockTranscriptEvents, type MockImagePlan } from "./mock-media-events.ts";
import { mockTranscript } from "./mock-transcript.ts";
import { renderMockImage } from "./render-mock-image.ts";

/** How much of an upload seeds the mock transcript: enough to tell files apart. */
const TRANSCRIPT_SEED_BYTES = 64 * 1024;
/**
 * The most numbers (inputs x dimensions) the mock embeds per request: vectors are computed
 * and serialised in one block, and 2048 inputs x 65536 dimensions held the event loop for 20 s.
 */
const MAX_MOCK_EMBEDDING_NUMBERS = 1_048_576;
/**
 * The most audio the mock transcribes per request, 10 hours: it writes 2.5 words a second in
 * one block, and a header may claim far more than real speech (m4a and webm timelines may
 * have gaps; a FLAC of silence holds a second per byte or so).
 */
const MAX_MOCK_TRANSCRIPT_SECONDS = 36_000;
/** The longest side the mock draws: an image is rendered in memory, 3 bytes a pixel, in one block. */
const MAX_MOCK_IMAGE_SIDE = 2048;

/**
 * The offline upstream for every non-chat endpoint: deterministic and meaningful enough for a
 * demo (similar texts embed close together, rerank is BM25, audio really decodes).
 */
export const mockMediaAdapter: MediaAdapter = {
  async embed(request) {
    const dimensions = request.dimensions ?? DEFAULT_MOCK_EMBEDDING_DIMENSIONS;
    if (request.inputs.length * dimensions > MAX_MOCK_EMBEDDING_NUMBERS) {
      const asked = `${request.inputs.length} inputs x ${dimensions} dimensions`;
      throw new UpstreamError("status", `The mock embedding model returns at most ${MAX_MOCK_EMBEDDING_NUMBERS} numbers (inputs x dimensions) per request, not ${asked}`, 400);
    }
    return {
      // Token IDs embed as the text of their numbers: the mock has no tokenizer to decode them.
      vectors: request.inputs.map((input) => embedText(typeof input === "string" ? input : input.join(" "), dimensions)),
      inputTokens: estimateEmbeddingTokens(request.inputs),
    };
  },

  async rerank(request) {
    const scores = scoreDocumentsBm25(request.query, request.documents);
    const ranking = scores
      .map((relevanceScore, index) => ({ index, relevanceScore }))
      .sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
    const queryTokens = estimateTokens(request.query);
    return { ranking, inputTokens: request.documents.reduce((sum, doc) => sum + queryTokens + estimateTokens(doc), 0) };
  },

  async generateImages(request, call) {
    const plan = planImages(request, call);
    const images = [];
    for (let i = 0; i < request.n; i++) {
      const png = await renderMockImage(request.prompt, i, plan.width, plan.height);
      images.push({ base64: bytesToBase64(png), mimeType: "image/png", revisedPrompt: request.prompt });
    }
    return { images, made: { size: plan.size, quality: plan.quality } };
  },

  async streamImages(request, call) {
    return mockImageEvents(request, planImages(request, call), call.now());
  },

  async speak(request, call) {
    warnIgnoredSpeechFields(request, call.warnings);
    return { body: mockSpeech(request.input, request.speed, request.format), contentType: SPEECH_CONTENT_TYPES[request.format] };
  },

  async streamSpeech(request, call) {
    warnIgnoredSpeechFields(request, call.warnings);
    return mockSpeechEvents(request);
  },

  async transcribe(request, call) {
    return { kind: "transcript", transcript: await transcriptOf(request, call) };
  },

  async streamTranscript(request, call) {
    // As OpenAI's streaming models: they answer json and text (and diarized_json, by speaker) and refuse the timed formats.
    if (!STREAMED_TRANSCRIPT_FORMATS.includes(request.responseFormat)) {
      const formats = STREAMED_TRANSCRIPT_FORMATS.join(", ");
      throw new UpstreamError("status", `The demo transcription model streams ${formats} transcripts, not ${request.responseFormat}; ask for ${request.responseFormat} without 'stream'`, 400);
    }
    return mockTranscriptEvents(await transcriptOf(request, call), request.responseFormat);
  },
};

/** What the demo image model draws for a request, within its bound; the fields it ignores named in the warnings. */
function planImages(request: ImageRequest, call: UpstreamCall): MockImagePlan {
  warnIgnored(call.warnings, Object.keys(request.extraFields), "the demo image model");
  // Left to the model (left out or "auto"), the mock draws the usual square, at DALL-E's default quality.
  const size = request.size === undefined || request.size === "auto" ? "1024x1024" : request.size;
  const quality = request.quality === undefined || request.quality === "auto" ? "standard" : request.quality;
  const [width, height] = size.split("x").map(Number) as [number, number];
  if (width > MAX_MOCK_IMAGE_SIDE || height > MAX_MOCK_IMAGE_SIDE) {
    throw new UpstreamError("status", `The mock image model draws sides of at most ${MAX_MOCK_IMAGE_SIDE} pixels, not ${request.size}`, 400);
  }
  return { size, quality, width, height };
}

/** The formats the demo model streams a transcript in. */
const STREAMED_TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = ["json", "text", "diarized_json"];

/** The mock's transcript of an upload, within its bound; the fields it ignores named in the warnings. */
async function transcriptOf(request: TranscriptionRequest, call: UpstreamCall): Promise<Transcript> {
  warnIgnored(call.warnings, new Set(request.extraFields.map(([field]) => field)), "the demo transcription model");
  const { file } = request;
  if (file.durationSeconds > MAX_MOCK_TRANSCRIPT_SECONDS) {
    throw new UpstreamError("status", `The mock transcription model hears at most ${MAX_MOCK_TRANSCRIPT_SECONDS} s (10 hours) of audio per request, not ${file.durationSeconds} s`, 400);
  }
  const seed = await file.read(0, Math.min(file.size, TRANSCRIPT_SEED_BYTES));
  return mockTranscript(seed, file.durationSeconds, { translate: request.task === "translate", language: request.language });
}

/** The demo voice speaks one way: a caller who asked for another, or sent fields it does not know, is told. */
function warnIgnoredSpeechFields(request: SpeechRequest, warnings: UpstreamWarnings): void {
  if (request.instructions) warnings.add("instructions", "the demo voice speaks one way and takes no instructions");
  warnIgnored(warnings, Object.keys(request.extraFields), "the demo voice");
}

/** Names each caller's field that `model` does not take in the warnings: sent, but ignored. */
function warnIgnored(warnings: UpstreamWarnings, names: Iterable<string>, model: string): void {
  for (const name of names) warnings.add(name, `not supported by ${model}; ignored`);
}
