import { describe, expect, test } from "bun:test";
import { DEFAULT_MOCK_EMBEDDING_DIMENSIONS, embedText } from "../../src/upstreams/mock/mock-embedding.ts";

/** Dot product; equal to cosine similarity for the unit vectors embedText returns. */
function cosine(a: number[], b: number[]): number {
  return a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
}

/** Euclidean length. */
function norm(vector: number[]): number {
  return Math.sqrt(cosine(vector, vector));
}

describe("embedText", () => {
  test("returns unit vectors of the requested length", () => {
    for (const dimensions of [1, 8, 256, 1536]) {
      const vector = embedText("the cat sat on the mat", dimensions);
      expect(vector).toHaveLength(dimensions);
      expect(Math.abs(norm(vector) - 1)).toBeLessThanOrEqual(1e-9);
    }
    expect(DEFAULT_MOCK_EMBEDDING_DIMENSIONS).toBe(256);
  });

  test("is deterministic", () => {
    const text = "Deterministic: the same text, the same vector — même texte, même vecteur 🙂";
    expect(embedText(text, 256)).toEqual(embedText(text, 256));
  });

  test("texts sharing words are close, unrelated texts are not", () => {
    const a = embedText("the cat sat on the mat", 256);
    const b = embedText("a cat sat on a mat", 256);
    const c = embedText("quantum chromodynamics lecture notes", 256);
    expect(cosine(a, b)).toBeGreaterThan(0.5);
    expect(Math.abs(cosine(a, c))).toBeLessThan(0.2);
    expect(Math.abs(cosine(b, c))).toBeLessThan(0.2);
  });

  test("ignores case and punctuation", () => {
    expect(embedText("Hello, World!", 64)).toEqual(embedText("hello world", 64));
  });

  test("text without words still gets a finite unit vector", () => {
    for (const text of ["", "   ", "!!!", "—", "\u{d800}"]) {
      const vector = embedText(text, 16);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(Math.abs(norm(vector) - 1)).toBeLessThanOrEqual(1e-9);
    }
    expect(embedText("!!!", 256)).not.toEqual(embedText("???", 256));
  });

  test("handles non-Latin scripts as words", () => {
    const a = embedText("Привет мир, как дела", 256);
    const b = embedText("привет мир", 256);
    expect(cosine(a, b)).toBeGreaterThan(0.5);
    expect(Math.abs(norm(a) - 1)).toBeLessThanOrEqual(1e-9);
  });

  test("rejects dimensions that are not positive integers", () => {
    for (const dimensions of [0, -1, 1.5, Number.NaN]) {
      expect(() => embedText("text", dimensions)).toThrow(RangeError);
    }
  });
});
