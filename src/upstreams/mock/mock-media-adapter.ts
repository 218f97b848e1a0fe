import type { MediaAdapter } from "../adapter.ts";
import type { SpeechFormat } from "../../canonical/media.ts";
import { encodeFlac } from "../../audio/encode-flac.ts";
import { encodeMp3Silence } from "../../audio/encode-mp3-silence.ts";
import { encodeWav } from "../../audio/encode-wav.ts";
import { speechDurationSeconds, synthesizeSpeechSamples } from "../../audio/synthesize-speech-samples.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { bytesToBase64 } from "../../lib/base64.ts";
import { UpstreamError } from "../upstream-error.ts";
import { SPEECH_CONTENT_TYPES } from "../openai/openai-media-adapter.ts";
import { DEFAULT_MOCK_EMBEDDING_DIMENSIONS, embedText } from "./mock-embedding.ts";
import { scoreDocumentsBm25 } from "./mock-rerank.ts";
import { mockTranscript } from "./mock-transcript.ts";
import { renderMockImage } from "./render-mock-image.ts";

/** 24 kHz mono, the rate OpenAI's own speech output uses. */
const SPEECH_SAMPLE_RATE = 24_000;
/** Bytes per chunk of mock audio: it streams like an upstream's would. */
const AUDIO_CHUNK_BYTES = 16 * 1024;
/** How much of an upload seeds the mock transcript: enough to tell files apart. */
const TRANSCRIPT_SEED_BYTES = 64 * 1024;

/** The mock voice's audio in `format`; formats it cannot encode are the upstream's 400. */
function encodeSpeech(text: string, speed: number, format: SpeechFormat): Uint8Array {
  switch (format) {
    case "wav":
      return encodeWav(synthesizeSpeechSamples(text, speed, SPEECH_SAMPLE_RATE), SPEECH_SAMPLE_RATE);
    case "flac":
      return encodeFlac(synthesizeSpeechSamples(text, speed, SPEECH_SAMPLE_RATE), SPEECH_SAMPLE_RATE);
    case "pcm":
      return new Uint8Array(synthesizeSpeechSamples(text, speed, SPEECH_SAMPLE_RATE).buffer);
    case "mp3":
      // No MP3 encoder ships in the gateway: the mock's MP3 is silence of the speech's length.
      return encodeMp3Silence(speechDurationSeconds(text, speed));
    default:
      throw new UpstreamError("status", `The mock voice renders mp3, wav, flac and pcm, not ${format}`, 400);
  }
}

/** `bytes` as a stream of AUDIO_CHUNK_BYTES chunks. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + AUDIO_CHUNK_BYTES));
      offset += AUDIO_CHUNK_BYTES;
    },
  });
}

/**
 * The offline upstream for every non-chat endpoint: deterministic and meaningful enough for a
 * demo (similar texts embed close together, rerank is BM25, audio really decodes).
 */
export const mockMediaAdapter: MediaAdapter = {
  async embed(request) {
    const dimensions = request.dimensions ?? DEFAULT_MOCK_EMBEDDING_DIMENSIONS;
    return {
      vectors: request.inputs.map((text) => embedText(text, dimensions)),
      inputTokens: request.inputs.reduce((sum, text) => sum + estimateTokens(text), 0),
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

  async generateImages(request) {
    const [width, height] = request.size.split("x").map(Number) as [number, number];
    const images = [];
    for (let i = 0; i < request.n; i++) {
      const png = await renderMockImage(request.prompt, i, width, height);
      images.push({ base64: bytesToBase64(png), mimeType: "image/png", revisedPrompt: request.prompt });
    }
    return { images };
  },

  async speak(request) {
    const audio = encodeSpeech(request.input, request.speed, request.format);
    return { body: chunked(audio), contentType: SPEECH_CONTENT_TYPES[request.format] };
  },

  async transcribe(request) {
    const { file } = request;
    const seed = await file.read(0, Math.min(file.size, TRANSCRIPT_SEED_BYTES));
    const transcript = mockTranscript(seed, file.durationSeconds, { translate: request.task === "translate", language: request.language });
    return { kind: "transcript", transcript };
  },
};
