import { describe, expect, test } from "bun:test";
import { speechDurationSeconds, synthesizeSpeechSamples } from "../../src/audio/synthesize-speech-samples.ts";

const RATE = 24000;
const SENTENCE = "The quick brown fox jumps over the lazy dog while the gateway answers every request";

describe("synthesizeSpeechSamples", () => {
  test("lasts speechDurationSeconds, to the nearest sample", () => {
    for (const [text, speed] of [[SENTENCE, 1], ["hello", 0.25], ["a b c", 4], ["", 1]] as const) {
      const samples = synthesizeSpeechSamples(text, speed, RATE);
      expect(Math.abs(samples.length / RATE - speechDurationSeconds(text, speed))).toBeLessThanOrEqual(0.5 / RATE);
    }
  });

  test("runs at about 150 words a minute at speed 1", () => {
    const words = SENTENCE.split(" ").length;
    const perMinute = (words / speechDurationSeconds(SENTENCE, 1)) * 60;
    expect(perMinute).toBeGreaterThan(130);
    expect(perMinute).toBeLessThan(170);
  });

  test("grows with the text and halves when the speed doubles", () => {
    const short = speechDurationSeconds("hello there", 1);
    const long = speechDurationSeconds("hello there general kenobi", 1);
    expect(long).toBeGreaterThan(short);
    expect(speechDurationSeconds(`${SENTENCE} ${SENTENCE}`, 1)).toBeCloseTo(2 * speechDurationSeconds(SENTENCE, 1), 9);
    for (const speed of [0.25, 0.5, 1, 2]) {
      expect(speechDurationSeconds(SENTENCE, speed * 2)).toBeCloseTo(speechDurationSeconds(SENTENCE, speed) / 2, 9);
    }
  });

  test("gives each word a length in proportion to its letters, capped for very long tokens", () => {
    const word = (letters: number) => speechDurationSeconds("x".repeat(letters), 1);
    expect(word(20) - word(10)).toBeCloseTo(2 * (word(10) - word(5)), 9);
    expect(word(400)).toBe(word(20)); // a URL or a long number must not last minutes
  });

  test("empty or blank text is still at least 0.2 s (of silence)", () => {
    for (const text of ["", "   \n\t "]) {
      expect(speechDurationSeconds(text, 1)).toBe(0.2);
      const samples = synthesizeSpeechSamples(text, 1, RATE);
      expect(samples.length).toBe(0.2 * RATE);
      expect(samples.every((s) => s === 0)).toBe(true);
    }
    expect(speechDurationSeconds("a", 4)).toBe(0.2);
  });

  test("is deterministic: the same input gives the same bytes", () => {
    const a = synthesizeSpeechSamples(SENTENCE, 1.3, RATE);
    const b = synthesizeSpeechSamples(SENTENCE, 1.3, RATE);
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    expect(Buffer.from(synthesizeSpeechSamples("other words", 1.3, RATE).buffer).equals(Buffer.from(a.buffer))).toBe(false);
  });

  test("stays well inside int16 and starts and ends each burst softly (no clicks)", () => {
    const samples = synthesizeSpeechSamples(SENTENCE, 1, RATE);
    let peak = 0;
    let biggestStep = 0;
    for (let i = 0; i < samples.length; i++) {
      peak = Math.max(peak, Math.abs(samples[i]!));
      if (i > 0) biggestStep = Math.max(biggestStep, Math.abs(samples[i]! - samples[i - 1]!));
    }
    expect(peak).toBeGreaterThan(8000); // audible
    expect(peak).toBeLessThan(32767); // never clipped
    // A click is a jump from silence to a large value; the ramps keep every step far smaller.
    expect(biggestStep).toBeLessThan(2000);
    expect(samples[0]).toBe(0);
    expect(samples[samples.length - 1]).toBe(0);
  });

  test("pitches differ between words but repeat for the same word", () => {
    const zeroCrossings = (samples: Int16Array) => samples.reduce((n, s, i) => (i > 0 && samples[i - 1]! < 0 && s >= 0 ? n + 1 : n), 0);
    const one = zeroCrossings(synthesizeSpeechSamples("banana", 1, RATE));
    expect(zeroCrossings(synthesizeSpeechSamples("banana", 1, RATE))).toBe(one);
    const others = ["cherry", "orange", "grapes", "papaya"].map((w) => zeroCrossings(synthesizeSpeechSamples(w, 1, RATE)));
    expect(new Set([one, ...others]).size).toBeGreaterThan(2);
  });

  test("clamps speeds outside 0.25..4", () => {
    expect(speechDurationSeconds(SENTENCE, 100)).toBe(speechDurationSeconds(SENTENCE, 4));
    expect(speechDurationSeconds(SENTENCE, 0)).toBe(speechDurationSeconds(SENTENCE, 0.25));
    expect(speechDurationSeconds(SENTENCE, Number.NaN)).toBe(speechDurationSeconds(SENTENCE, 1));
  });
});
