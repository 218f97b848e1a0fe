import { describe, expect, test } from "bun:test";
import { hashFnv1a } from "../../src/lib/hash-fnv1a.ts";

describe("hashFnv1a", () => {
  test("a string hashes as its UTF-8 bytes, lone surrogates included", () => {
    for (const text of ["", "abc", "héllo", "日本語", "🙂 emoji", "lone \u{d800} high", "lone \u{dc00} low"]) {
      expect(hashFnv1a(text)).toBe(hashFnv1a(new TextEncoder().encode(text)));
    }
  });

  test("returns unsigned 32-bit integers that differ for near-identical input", () => {
    const values = ["a", "b", "ab", "ba", "aa"].map(hashFnv1a);
    for (const value of values) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(2 ** 32);
    }
    expect(new Set(values).size).toBe(values.length);
  });
});
