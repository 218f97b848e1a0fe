import { describe, expect, test } from "bun:test";
import type { Transcript } from "../../src/canonical/transcript.ts";
import {
  MOCK_MAX_SEGMENT_SECONDS,
  MOCK_MAX_SEGMENT_WORDS,
  mockTranscript,
} from "../../src/upstreams/mock/mock-transcript.ts";

/** Asserts the segments tile [0, duration] exactly, in order, within both caps. */
function expectTiled(t: Transcript): void {
  expect(t.segments[0]?.start).toBe(0);
  expect(t.segments.at(-1)?.end).toBe(t.durationSeconds);
  t.segments.forEach((segment, i) => {
    expect(segment.id).toBe(i);
    expect(segment.end).toBeGreaterThan(segment.start);
    expect(segment.end - segment.start).toBeLessThanOrEqual(MOCK_MAX_SEGMENT_SECONDS);
    expect(segment.text.split(" ").length).toBeLessThanOrEqual(MOCK_MAX_SEGMENT_WORDS);
    expect(segment.text).toMatch(/^[A-Z][a-z]*( [a-z]+)*\.$/);
    const next = t.segments[i + 1];
    if (next) expect(next.start).toBe(segment.end);
  });
  expect(t.text).toBe(t.segments.map((segment) => segment.text).join(" "));
}

/** Number of words in the transcript's text. */
function wordCount(t: Transcript): number {
  return t.text === "" ? 0 : t.text.split(" ").length;
}

describe("mockTranscript", () => {
  const options = { translate: false };

  test("the same seed gives the same transcript; another seed another", () => {
    const a = mockTranscript("file-one", 30, options);
    expect(mockTranscript("file-one", 30, options)).toEqual(a);
    expect(mockTranscript("file-two", 30, options).text).not.toBe(a.text);
  });

  test("a string seed and its UTF-8 bytes agree", () => {
    const seed = "héllo 🙂";
    expect(mockTranscript(new TextEncoder().encode(seed), 20, options)).toEqual(mockTranscript(seed, 20, options));
    const bytes = Uint8Array.from({ length: 65_536 }, (_, i) => (i * 31) & 0xff);
    expect(mockTranscript(bytes, 20, options)).toEqual(mockTranscript(bytes.slice(), 20, options));
  });

  test("0 s gives empty text and no segments", () => {
    expect(mockTranscript("x", 0, options)).toEqual({ text: "", language: "en", durationSeconds: 0, segments: [] });
    expect(mockTranscript("x", 0.19, options).segments).toEqual([]);
  });

  test("0.3 s gives one one-word segment covering the whole file", () => {
    const t = mockTranscript("x", 0.3, options);
    expect(t.segments).toHaveLength(1);
    expect(t.segments[0]).toMatchObject({ id: 0, start: 0, end: 0.3 });
    expect(wordCount(t)).toBe(1);
    expectTiled(t);
  });

  test("3600 s tiles the hour at about 2.5 words a second", () => {
    const t = mockTranscript("long", 3600, options);
    expectTiled(t);
    expect(wordCount(t)).toBe(9000);
    expect(t.durationSeconds).toBe(3600);
  });

  test("awkward durations still tile exactly within the caps", () => {
    for (const duration of [0.2, 1, 5.999, 6, 6.0004, 12.345, 59.9999, 61.7, 359.99, 1234.5678]) {
      expectTiled(mockTranscript(`seed-${duration}`, duration, options));
    }
  });

  test("language: English when translating, else the code given (lower-cased), else en", () => {
    expect(mockTranscript("x", 5, { translate: true, language: "de" }).language).toBe("en");
    expect(mockTranscript("x", 5, { translate: false, language: "DE" }).language).toBe("de");
    expect(mockTranscript("x", 5, { translate: false }).language).toBe("en");
  });

  test("rejects negative and non-finite durations", () => {
    for (const duration of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => mockTranscript("x", duration, options)).toThrow(RangeError);
    }
  });
});
