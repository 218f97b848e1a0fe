/**
 * A token count estimate for text whose real count is unknown: about 4 characters a token
 * for English, the common rule of thumb. Used for the mock model, holds and streams whose
 * upstream reports no usage.
 */
export function estimateTokens(text: string): number {
  return tokensOfLength(text.length);
}

/** estimateTokens of a text known only by its length, for a stream that counts its text rather than keep it. */
export function tokensOfLength(length: number): number {
  return length === 0 ? 0 : Math.max(1, Math.ceil(length / 4));
}
