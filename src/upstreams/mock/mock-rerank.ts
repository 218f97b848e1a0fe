import { tokenizeWords } from "./tokenize-words.ts";

const K1 = 1.2;
const B = 0.75;
// The raw score at which relevance reads 0.5: about one distinctive query word matched once.
const HALF_RELEVANCE_SCORE = 1;

/**
 * Each document's Okapi BM25 score for the query (k1 1.2, b 0.75, the always-positive
 * idf ln(1 + (N - n + 0.5) / (n + 0.5))), squashed by s / (s + 1) into [0, 1) so it reads like
 * a reranker's relevance_score. Each distinct query word counts once; a document sharing no
 * query word scores exactly 0. Linear in the total length of query and documents.
 */
export function scoreDocumentsBm25(query: string, documents: string[]): number[] {
  const queryTerms = new Set(tokenizeWords(query));
  // Only query terms are counted, so the work per document is one pass over its words.
  const lengths: number[] = [];
  const termCounts: Map<string, number>[] = [];
  const documentFrequency = new Map<string, number>();
  for (const document of documents) {
    const words = tokenizeWords(document);
    const counts = new Map<string, number>();
    for (const word of words) {
      if (queryTerms.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
    for (const term of counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    lengths.push(words.length);
    termCounts.push(counts);
  }
  const totalLength = lengths.reduce((sum, length) => sum + length, 0);
  const averageLength = documents.length === 0 ? 0 : totalLength / documents.length;
  return termCounts.map((counts, i) => {
    // Read only when a term matched, which means a non-empty document and averageLength > 0.
    const lengthRatio = (lengths[i] ?? 0) / averageLength;
    let score = 0;
    for (const [term, frequency] of counts) {
      const idf = inverseDocumentFrequency(documents.length, documentFrequency.get(term) ?? 0);
      score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + B * lengthRatio));
    }
    return score / (score + HALF_RELEVANCE_SCORE);
  });
}

/** BM25's idf in the Lucene form, which stays positive for terms in most documents. */
function inverseDocumentFrequency(documentCount: number, containing: number): number {
  return Math.log(1 + (documentCount - containing + 0.5) / (containing + 0.5));
}
