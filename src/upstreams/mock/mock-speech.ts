import type { SpeechFormat } from "../../canonical/media.ts";
import { encodeFlacFrames, FLAC_BLOCK_SIZE, flacStreamHeader } from "../../audio/encode-flac.ts";
import { encodeMp3Silence } from "../../audio/encode-mp3-silence.ts";
import { encodeOpusSilence } from "../../audio/encode-opus-silence.ts";
import { encodeAacSilence } from "../../audio/encode-aac-silence.ts";
import { pcm16LittleEndian, wavHeader } from "../../audio/encode-wav.ts";
import { speechClip, speechDurationSeconds } from "../../audio/synthesize-speech-samples.ts";
import { sliceStream } from "../../streams/slice-stream.ts";

/** 24 kHz mono, the rate OpenAI's own speech output uses. */
const SPEECH_SAMPLE_RATE = 24_000;
/**
 * Samples made per slice: 0.7 s of audio, 32 KB, about a millisecond of work. Whole FLAC
 * blocks, so each slice's frames continue the last one's numbering.
 */
const SLICE_SAMPLES = 4 * FLAC_BLOCK_SIZE;
/** Bytes per chunk of a silent format, which is made whole (silence costs little to write). */
const SILENCE_CHUNK_BYTES = 32 * 1024;

/**
 * The lossy formats, for which no encoder ships in the gateway: the mock's audio in them is
 * silence of the speech's length.
 */
const SILENT_FORMATS: Partial<Record<SpeechFormat, (seconds: number) => Uint8Array>> = {
  mp3: encodeMp3Silence,
  opus: (seconds) => encodeOpusSilence(seconds, SPEECH_SAMPLE_RATE),
  aac: (seconds) => encodeAacSilence(seconds, SPEECH_SAMPLE_RATE),
};

/** The audio as it is sent: a header where the format has one, then the samples a slice at a time. */
function* speechSlices(text: string, speed: number, format: SpeechFormat): Generator<Uint8Array> {
  const silence = SILENT_FORMATS[format];
  if (silence) {
    const audio = silence(speechDurationSeconds(text, speed));
    for (let at = 0; at < audio.length; at += SILENCE_CHUNK_BYTES) yield audio.subarray(at, at + SILENCE_CHUNK_BYTES);
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
 * The mock voice speaking `text` in `format` (every speech format), made while it streams:
 * 4096 characters at speed 0.25 last 21 minutes (61 MB of FLAC), which made in one piece
 * blocked every other request for over 3 s.
 */
export function mockSpeech(text: string, speed: number, format: SpeechFormat): ReadableStream<Uint8Array> {
  return sliceStream(speechSlices(text, speed, format));
}
