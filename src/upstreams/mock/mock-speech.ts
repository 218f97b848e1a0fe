import type { SpeechFormat } from "../../canonical/media.ts";
import { encodeFlacFrames, FLAC_BLOCK_SIZE, flacStreamHeader } from "../../audio/encode-flac.ts";
import { encodeMp3Silence } from "../../audio/encode-mp3-silence.ts";
import { pcm16LittleEndian, wavHeader } from "../../audio/encode-wav.ts";
import { speechClip, speechDurationSeconds } from "../../audio/synthesize-speech-samples.ts";
import { sliceStream } from "../../streams/slice-stream.ts";
import { UpstreamError } from "../upstream-error.ts";

/** 24 kHz mono, the rate OpenAI's own speech output uses. */
const SPEECH_SAMPLE_RATE = 24_000;
/**
 * Samples made per slice: 0.7 s of audio, 32 KB, about a millisecond of work. Whole FLAC
 * blocks, so each slice's frames continue the last one's numbering.
 */
const SLICE_SAMPLES = 4 * FLAC_BLOCK_SIZE;
/** Bytes per chunk of the MP3, which is made whole (silence costs little to write). */
const MP3_CHUNK_BYTES = 32 * 1024;
const MOCK_FORMATS: readonly SpeechFormat[] = ["mp3", "wav", "flac", "pcm"];

/** The audio as it is sent: a header where the format has one, then the samples a slice at a time. */
function* speechSlices(text: string, speed: number, format: SpeechFormat): Generator<Uint8Array> {
  if (format === "mp3") {
    // No MP3 encoder ships in the gateway: the mock's MP3 is silence of the speech's length.
    const mp3 = encodeMp3Silence(speechDurationSeconds(text, speed));
    for (let at = 0; at < mp3.length; at += MP3_CHUNK_BYTES) yield mp3.subarray(at, at + MP3_CHUNK_BYTES);
    return;
  }
  const clip = speechClip(text, speed, SPEECH_SAMPLE_RATE);
  if (format === "wav") yield wavHeader(clip.length, SPEECH_SAMPLE_RATE);
  if (format === "flac") yield flacStreamHeader(clip.length, SPEECH_SAMPLE_RATE);
  for (let from = 0; from < clip.length; from += SLICE_SAMPLES) {
    const samples = clip.render(from, Math.min(clip.length, from + SLICE_SAMPLES));
    yield format === "flac" ? encodeFlacFrames(samples, from / FLAC_BLOCK_SIZE, SPEECH_SAMPLE_RATE) : pcm16LittleEndian(samples);
  }
}

/**
 * The mock voice speaking `text` in `format`, made while it streams: 4096 characters at speed
 * 0.25 last 21 minutes (61 MB of FLAC), which made in one piece blocked every other request
 * for over 3 s. Formats it cannot encode are the upstream's 400, before any audio.
 */
export function mockSpeech(text: string, speed: number, format: SpeechFormat): ReadableStream<Uint8Array> {
  if (!MOCK_FORMATS.includes(format)) throw new UpstreamError("status", `The mock voice renders ${MOCK_FORMATS.join(", ")}, not ${format}`, 400);
  return sliceStream(speechSlices(text, speed, format));
}
