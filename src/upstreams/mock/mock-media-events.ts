import type { StreamPart } from "../../canonical/chat.ts";
import { IMAGE_COMPLETED, type ImageRequest, type SpeechRequest } from "../../canonical/media.ts";
import type { Transcript, TranscriptFormat } from "../../canonical/transcript.ts";
import { diarizedSegment } from "../../translate/transcription/render-transcript.ts";
import { afterTurn } from "../../lib/next-turn.ts";
import { speechDurationSeconds } from "../../audio/synthesize-speech-samples.ts";
import { bytesToBase64 } from "../../lib/base64.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { batchesFrom } from "../../streams/batch-source.ts";
import type { EventsAnswer } from "../adapter.ts";
import { mockSpeech } from "./mock-speech.ts";
import { renderMockImage } from "./render-mock-image.ts";

/**
 * The demo models' own count of audio tokens (OpenAI's audio models report theirs in the
 * usage of their events); the gateway bills audio by characters and minutes, not by it.
 */
const MOCK_AUDIO_TOKENS_PER_SECOND = 10;

/** One event of OpenAI's media streams, named by its type as its data says it, as an upstream would send it. */
function mediaEvent(type: string, fields: Record<string, unknown>): StreamPart {
  const body = { type, ...fields };
  return { type: "native", event: { event: type, data: JSON.stringify(body) }, body };
}

/** OpenAI's token usage of an audio model's events: `input` and `output` tokens and their sum. */
function tokenUsage(input: number, output: number) {
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** Tokens of `seconds` of audio, by the demo models' own count. */
const mockAudioTokens = (seconds: number) => Math.ceil(seconds * MOCK_AUDIO_TOKENS_PER_SECOND);

/** Each piece of the mock voice's audio as a speech.audio.delta event, as it is made, then speech.audio.done. */
async function* speechEvents(request: SpeechRequest): AsyncGenerator<StreamPart, void> {
  const reader = mockSpeech(request.input, request.speed, request.format).getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) yield mediaEvent("speech.audio.delta", { audio: bytesToBase64(next.value) });
  } finally {
    // A caller that hangs up stops the audio being made.
    await reader.cancel();
  }
  const seconds = speechDurationSeconds(request.input, request.speed);
  yield mediaEvent("speech.audio.done", { usage: tokenUsage(estimateTokens(request.input), mockAudioTokens(seconds)) });
}

/** A generator's events as an adapter answers them, each made only when it is read. */
const eventsAnswer = (events: AsyncGenerator<StreamPart, void>): EventsAnswer => ({ kind: "events", events: batchesFrom(events) });

/** The mock voice's speech as OpenAI's events, made a piece at a time while they are read (see mockSpeech). */
export function mockSpeechEvents(request: SpeechRequest): EventsAnswer {
  return eventsAnswer(speechEvents(request));
}

/** The pieces of a transcript a stream sends: a segment each for diarized_json, else its words, each after the last one's space. */
function transcriptPieces(transcript: Transcript, format: TranscriptFormat): StreamPart[] {
  if (format === "diarized_json") return transcript.segments.map((segment) => mediaEvent("transcript.text.segment", diarizedSegment(segment)));
  const words = transcript.text === "" ? [] : transcript.text.split(" ");
  return words.map((word, i) => mediaEvent("transcript.text.delta", { delta: i === 0 ? word : ` ${word}` }));
}

/** The pieces, each on a later event-loop turn, as an upstream sends them while it transcribes; then the whole text with its usage. */
async function* transcriptEvents(transcript: Transcript, format: TranscriptFormat): AsyncGenerator<StreamPart, void> {
  for (const piece of transcriptPieces(transcript, format)) {
    yield piece;
    await afterTurn();
  }
  const audioTokens = mockAudioTokens(transcript.durationSeconds);
  const usage = { type: "tokens", ...tokenUsage(audioTokens, estimateTokens(transcript.text)), input_token_details: { text_tokens: 0, audio_tokens: audioTokens } };
  yield mediaEvent("transcript.text.done", { text: transcript.text, usage });
}

/** A mock transcript streamed as OpenAI's streaming transcription models send theirs (`format` is json, text or diarized_json). */
export function mockTranscriptEvents(transcript: Transcript, format: TranscriptFormat): EventsAnswer {
  return eventsAnswer(transcriptEvents(transcript, format));
}

/** The size and quality the demo image model makes a request's images at, and their sides in pixels. */
export interface MockImagePlan {
  size: string;
  quality: string;
  width: number;
  height: number;
}

/**
 * Each image's drafts, coarser the earlier (drawn at a fraction of its sides), each as an
 * image_generation.partial_image event, then the image itself as image_generation.completed;
 * one image after another, each event on a later event-loop turn, as drawing it takes time.
 */
async function* imageEvents(request: ImageRequest, plan: MockImagePlan, now: number): AsyncGenerator<StreamPart, void> {
  const partials = request.partialImages ?? 0;
  const fields = { created_at: Math.floor(now / 1000), size: plan.size, quality: plan.quality, background: "opaque", output_format: "png" };
  const drawn = async (index: number, fraction: number) => {
    const side = (pixels: number) => Math.max(1, Math.round(pixels * fraction));
    return bytesToBase64(await renderMockImage(request.prompt, index, side(plan.width), side(plan.height)));
  };
  const promptTokens = estimateTokens(request.prompt);
  for (let i = 0; i < request.n; i++) {
    for (let k = 0; k < partials; k++) {
      yield mediaEvent("image_generation.partial_image", { b64_json: await drawn(i, (k + 1) / (partials + 1)), ...fields, partial_image_index: k });
      await afterTurn();
    }
    // The demo draws without image tokens; its prompt is counted as the gateway estimates text.
    const usage = { ...tokenUsage(promptTokens, 0), input_tokens_details: { image_tokens: 0, text_tokens: promptTokens } };
    yield mediaEvent(IMAGE_COMPLETED, { b64_json: await drawn(i, 1), ...fields, usage });
    await afterTurn();
  }
}

/** The demo model's images streamed as OpenAI's GPT image models stream theirs. */
export function mockImageEvents(request: ImageRequest, plan: MockImagePlan, now: number): EventsAnswer {
  return eventsAnswer(imageEvents(request, plan, now));
}
