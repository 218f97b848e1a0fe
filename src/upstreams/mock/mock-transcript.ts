import type { Transcript, TranscriptSegment } from "../../canonical/transcript.ts";
import { hashFnv1a } from "../../lib/hash-fnv1a.ts";

/** A typical speaking rate; the mock "hears" this many words per second of audio. */
export const MOCK_WORDS_PER_SECOND = 2.5;
/** The longest segment the mock makes, in seconds. */
export const MOCK_MAX_SEGMENT_SECONDS = 6;
/** The most words the mock puts in one segment. */
export const MOCK_MAX_SEGMENT_WORDS = 15;

// Inner boundaries are rounded to whole milliseconds; planning segments a millisecond shorter
// than the cap keeps a rounded segment from ever exceeding it.
const PLANNED_SEGMENT_SECONDS = MOCK_MAX_SEGMENT_SECONDS - 0.001;

const WORDS = (
  "the a river morning light city quiet people walk along water under bright sky " +
  "small house near old bridge where children play and birds sing through long summer " +
  "day evening market opens with fresh bread fruit coffee friends meet talk about work " +
  "music books travel weather news garden window road train station north south green"
).split(" ");

/** The options the mock honours: translations always come back in English. */
export interface MockTranscriptOptions {
  translate: boolean;
  language?: string;
}

/**
 * A deterministic transcript for audio the mock cannot hear: words picked from a built-in
 * English list, seeded by a hash of `seed` (e.g. the file's first 64 KB), about 2.5 words a
 * second, in one-sentence segments of at most 6 s and 15 words that tile [0, duration]
 * exactly. Fewer than 0.2 s of audio rounds to no words: empty text and no segments, as
 * Whisper answers for silence. The language is "en" when translating, else the code given
 * (lower-cased; the text stays English), else "en".
 */
export function mockTranscript(seed: Uint8Array | string, durationSeconds: number, options: MockTranscriptOptions): Transcript {
  if (!Number.isFinite(durationSeconds) || durationSeconds < 0) {
    throw new RangeError(`durationSeconds must be a finite number >= 0, got ${durationSeconds}`);
  }
  const language = options.translate ? "en" : (options.language?.toLowerCase() ?? "en");
  const wordCount = Math.round(durationSeconds * MOCK_WORDS_PER_SECOND);
  if (wordCount === 0) return { text: "", language, durationSeconds, segments: [] };
  // Both caps force a split; at 2.5 words a second there are always more words than segments.
  const segmentCount = Math.max(
    Math.ceil(wordCount / MOCK_MAX_SEGMENT_WORDS),
    Math.ceil(durationSeconds / PLANNED_SEGMENT_SECONDS),
  );
  const nextWord = createWordPicker(hashFnv1a(seed));
  const segments: TranscriptSegment[] = [];
  for (let id = 0; id < segmentCount; id++) {
    const words = shareOf(wordCount, segmentCount, id + 1) - shareOf(wordCount, segmentCount, id);
    segments.push({
      id,
      start: boundary(durationSeconds, segmentCount, id),
      end: boundary(durationSeconds, segmentCount, id + 1),
      text: makeSentence(words, nextWord),
    });
  }
  return { text: segments.map((segment) => segment.text).join(" "), language, durationSeconds, segments };
}

/** How many of `total` items fall before the i-th of `parts` even cuts. */
function shareOf(total: number, parts: number, i: number): number {
  return Math.floor((total * i) / parts);
}

/** The i-th of `parts` even cuts of the duration, to the millisecond; the ends are exact. */
function boundary(duration: number, parts: number, i: number): number {
  if (i === 0) return 0;
  if (i === parts) return duration;
  return Math.round((duration * i * 1000) / parts) / 1000;
}

/** A capitalised sentence of `count` words ending in a full stop. */
function makeSentence(count: number, nextWord: () => string): string {
  const words = Array.from({ length: count }, nextWord);
  const first = words[0] ?? "";
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${words.join(" ")}.`;
}

/** A word stream from mulberry32, a small seeded generator: the same seed gives the same words. */
function createWordPicker(seed: number): () => string {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const value = (t ^ (t >>> 14)) >>> 0;
    return WORDS[value % WORDS.length] ?? "the";
  };
}
