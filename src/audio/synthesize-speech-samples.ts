import { hashFnv1a } from "../lib/hash-fnv1a.ts";

/** A word's tone burst inside the plan, in seconds from the start. */
interface WordTone {
  start: number;
  seconds: number;
  frequency: number;
}

/** Where each word sounds and how long the whole clip lasts, shared by samples and duration. */
interface SpeechPlan {
  words: WordTone[];
  seconds: number;
}

// 65 ms a letter plus a 90 ms gap makes an average English word (about 4.7 letters) last
// about 0.4 s: 150 words a minute at speed 1.
const SECONDS_PER_LETTER = 0.065;
const GAP_SECONDS = 0.09;
// A URL or a run of digits is one "word"; capping it stops one token from lasting a minute.
const MAX_LETTERS = 20;
const MIN_SECONDS = 0.2;
const MIN_SPEED = 0.25;
const MAX_SPEED = 4;
// Attack and decay ramps: long enough to avoid clicks, short enough to leave a tone.
const RAMP_SECONDS = 0.02;
const PEAK = 0.5 * 32767;
const HARMONICS = [1, 0.5, 0.25] as const;
const HARMONIC_SUM = HARMONICS.reduce((sum, weight) => sum + weight, 0);

/** The speed actually used: the API range 0.25..4; anything else (NaN included) is pulled into it. */
function clampSpeed(speed: number): number {
  if (!Number.isFinite(speed)) return speed > 0 ? MAX_SPEED : speed < 0 ? MIN_SPEED : 1;
  return Math.min(MAX_SPEED, Math.max(MIN_SPEED, speed));
}

/** A pitch in a speaking voice's range (110..250 Hz) that is the same every time for a word. */
function pitchOf(word: string): number {
  return 110 + (hashFnv1a(word) % 141);
}

/** Lays the words of `text` out in time. */
function planSpeech(text: string, speed: number): SpeechPlan {
  const pace = clampSpeed(speed);
  const words: WordTone[] = [];
  let at = 0;
  for (const word of text.split(/\s+/)) {
    if (word === "") continue;
    const letters = Array.from(word);
    const seconds = (SECONDS_PER_LETTER * Math.min(letters.length, MAX_LETTERS)) / pace;
    words.push({ start: at, seconds, frequency: pitchOf(word) });
    at += seconds + GAP_SECONDS / pace;
  }
  return { words, seconds: Math.max(at, MIN_SECONDS) };
}

/**
 * The length in seconds of the clip `synthesizeSpeechSamples` makes for `text` at `speed`, so
 * an encoder with no samples (the MP3 silence) can produce a file of the same length.
 */
export function speechDurationSeconds(text: string, speed: number): number {
  return planSpeech(text, speed).seconds;
}

/** Gain at time `t` into a burst of `seconds`: sine-squared ramps in and out, 1 between. */
function envelope(t: number, seconds: number): number {
  const ramp = Math.min(RAMP_SECONDS, seconds / 4);
  const edge = Math.min(t, seconds - t);
  if (edge >= ramp) return 1;
  const s = Math.sin((Math.PI / 2) * Math.max(0, edge / ramp));
  return s * s;
}

/** A clip of speech that renders its samples a range at a time. */
export interface SpeechClip {
  /** Samples in the whole clip. */
  length: number;
  /** Samples `from` (inclusive) to `to` (exclusive) of the clip. */
  render(from: number, to: number): Int16Array;
}

/**
 * Deterministic speech-like mono audio for the mock TTS: per word a tone burst with a few
 * harmonics and a falling pitch, then a short gap. Its length is
 * `speechDurationSeconds(text, speed)` rounded to the nearest sample. Rendered by ranges, a
 * clip of 20 minutes (4096 characters at speed 0.25) can be produced in slices between which
 * other requests run, instead of in one block of a second or more.
 */
export function speechClip(text: string, speed: number, sampleRate: number): SpeechClip {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new RangeError(`invalid sample rate ${sampleRate}`);
  const plan = planSpeech(text, speed);
  const bursts = plan.words.map((word) => ({ word, first: Math.round(word.start * sampleRate), last: Math.round((word.start + word.seconds) * sampleRate) }));
  const length = Math.round(plan.seconds * sampleRate);
  return {
    length,
    render(from, to) {
      const samples = new Int16Array(to - from);
      for (let b = firstBurstEndingAfter(bursts, from); b < bursts.length && bursts[b]!.first < to; b++) {
        const { word, first, last } = bursts[b]!;
        const end = Math.min(length, last, to);
        for (let i = Math.max(first, from); i < end; i++) samples[i - from] = burstSample(word, (i - first) / sampleRate);
      }
      return samples;
    },
  };
}

/** The whole clip `speechClip` renders, at once. */
export function synthesizeSpeechSamples(text: string, speed: number, sampleRate: number): Int16Array {
  const clip = speechClip(text, speed, sampleRate);
  return clip.render(0, clip.length);
}

/** The index of the first burst (in time order) that ends after sample `at`, by binary search. */
function firstBurstEndingAfter(bursts: readonly { last: number }[], at: number): number {
  let low = 0;
  let high = bursts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (bursts[middle]!.last <= at) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The sample `t` seconds into a word's burst. */
function burstSample(word: WordTone, t: number): number {
  // Pitch falls 10% over the word, like the end of a spoken phrase; the phase is the
  // integral of that frequency so the glide has no jumps.
  const phase = 2 * Math.PI * word.frequency * (t - (0.05 * t * t) / word.seconds);
  let value = 0;
  for (let h = 0; h < HARMONICS.length; h++) value += HARMONICS[h]! * Math.sin((h + 1) * phase);
  return Math.round((PEAK * envelope(t, word.seconds) * value) / HARMONIC_SUM);
}
