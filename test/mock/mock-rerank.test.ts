import { describe, expect, test } from "bun:test";
import { scoreDocumentsBm25 } from "../../src/upstreams/mock/mock-rerank.ts";

/** Index of the largest value. */
function argMax(values: number[]): number {
  return values.reduce((best, value, i) => (value > (values[best] ?? -Infinity) ? i : best), 0);
}

describe("scoreDocumentsBm25", () => {
  const documents = [
    "Paris is the capital of France and its largest city.",
    "The Eiffel Tower was completed in 1889.",
    "Berlin is the capital of Germany.",
    "Bananas are rich in potassium.",
    "Photosynthesis converts light into chemical energy.",
  ];

  test("ranks the document containing the query terms first", () => {
    const scores = scoreDocumentsBm25("capital of France", documents);
    expect(scores).toHaveLength(5);
    expect(argMax(scores)).toBe(0);
    expect(scores[0]!).toBeGreaterThan(scores[2]!);
    expect(scores[2]!).toBeGreaterThan(0);
  });

  test("scores lie in [0, 1)", () => {
    const longQuery = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const scores = [
      ...scoreDocumentsBm25("capital of France Eiffel bananas light", documents),
      ...scoreDocumentsBm25(longQuery, [longQuery, longQuery.repeat(3), "nothing"]),
    ];
    for (const score of scores) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThan(1);
    }
  });

  test("a repeated term scores higher than a single one in a document of the same length", () => {
    const [once, twice] = scoreDocumentsBm25("apple", ["apple banana cherry", "apple apple cherry", "kiwi lime mango"]);
    expect(twice!).toBeGreaterThan(once!);
  });

  test("documents sharing no query word score exactly 0", () => {
    const scores = scoreDocumentsBm25("quantum", documents);
    expect(scores).toEqual([0, 0, 0, 0, 0]);
    expect(scoreDocumentsBm25("", documents)).toEqual([0, 0, 0, 0, 0]);
    expect(scoreDocumentsBm25("anything", ["", "  "])).toEqual([0, 0]);
    expect(scoreDocumentsBm25("anything", [])).toEqual([]);
  });

  test("matches a hand-computed BM25 value", () => {
    // N = 3, lengths 2, 3, 1, average 2. Query words "dog" (in 2 documents) and "bird" (in 1).
    const scores = scoreDocumentsBm25("dog bird", ["cat dog", "dog dog bird", "fish"]);
    const idfDog = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
    const idfBird = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
    // Document 1: length ratio 3 / 2, so the length norm is 1 - 0.75 + 0.75 * 1.5 = 1.375.
    const raw1 = (idfDog * 2 * 2.2) / (2 + 1.2 * 1.375) + (idfBird * 1 * 2.2) / (1 + 1.2 * 1.375);
    // Document 0: length ratio 1, so its single "dog" scores exactly idf.
    const raw0 = idfDog;
    expect(Math.abs(scores[0]! - raw0 / (raw0 + 1))).toBeLessThan(1e-9);
    expect(Math.abs(scores[1]! - raw1 / (raw1 + 1))).toBeLessThan(1e-9);
    expect(scores[2]).toBe(0);
  });

  test("counts each distinct query word once and ignores case", () => {
    const docs = ["Dog days", "cat nap"];
    expect(scoreDocumentsBm25("dog DOG dog", docs)).toEqual(scoreDocumentsBm25("dog", docs));
  });

  test("is deterministic", () => {
    expect(scoreDocumentsBm25("capital city", documents)).toEqual(scoreDocumentsBm25("capital city", documents));
  });
});
