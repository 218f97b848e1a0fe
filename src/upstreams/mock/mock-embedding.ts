import { hashFnv1a } from "../../lib/hash-fnv1a.ts";
import { tokenizeWords } from "./tokenize-words.ts";

/** The mock embedding model's vector length when the request names none. */
export const DEFAULT_MOCK_EMBEDDING_DIMENSIONS = 256;

// Whole words carry the meaning; bigrams reward shared word order; trigrams let "cats" sit
// near "cat" but are many per word, so each counts for little.
const UNIGRAM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.25;

/**
 * A deterministic unit vector for text by signed feature hashing of its words, word pairs and
 * character trigrams: texts sharing words score a high cosine, unrelated texts near zero.
 * Text without words (or whose features cancel out) still gets a unit vector, from its raw hash.
 */
export function embedText(text: string, dimensions: number): number[] {
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`);
  }
  const vector = new Float64Array(dimensions);
  const words = tokenizeWords(text);
  let previous: string | undefined;
  for (const word of words) {
    addFeature(vector, `w:${word}`, UNIGRAM_WEIGHT);
    if (previous !== undefined) addFeature(vector, `b:${previous} ${word}`, BIGRAM_WEIGHT);
    addTrigrams(vector, word);
    previous = word;
  }
  return normalize(vector, text);
}

/** Adds the trigrams of the word padded with boundary marks, by code point so emoji stay whole. */
function addTrigrams(vector: Float64Array, word: string): void {
  const chars = Array.from(`#${word}#`);
  for (let i = 0; i + 3 <= chars.length; i++) {
    addFeature(vector, `t:${chars[i]}${chars[i + 1]}${chars[i + 2]}`, TRIGRAM_WEIGHT);
  }
}

/** Adds ±weight at the feature's hashed index; the random sign keeps collisions from biasing cosines upward. */
function addFeature(vector: Float64Array, feature: string, weight: number): void {
  const h = hashFnv1a(feature);
  // Bit 0 is the sign and the remaining bits the index, so the two never correlate.
  const index = (h >>> 1) % vector.length;
  vector[index] = (vector[index] ?? 0) + (h & 1 ? -weight : weight);
}

/** Scales to unit length, or falls back to a one-hot from the raw text's hash when nothing is left. */
function normalize(vector: Float64Array, text: string): number[] {
  let sumOfSquares = 0;
  for (const value of vector) sumOfSquares += value * value;
  if (sumOfSquares === 0) {
    const h = hashFnv1a(`raw:${text}`);
    vector[(h >>> 1) % vector.length] = h & 1 ? -1 : 1;
    return Array.from(vector);
  }
  const norm = Math.sqrt(sumOfSquares);
  // A plain loop: Array.from with a map function took most of a large request's time.
  const unit = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) unit[i] = vector[i]! / norm;
  return unit;
}
