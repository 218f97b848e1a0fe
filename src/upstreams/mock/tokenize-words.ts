const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The lower-cased runs of Unicode letters and digits in text: the one word split shared by
 * the mock embedding and the mock reranker, so both agree on what a "word" is.
 */
export function tokenizeWords(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}
