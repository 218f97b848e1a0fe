import { estimateTokens } from "../../lib/estimate-tokens.ts";

/** Cohere's search unit: one query with up to this many documents. */
const DOCUMENTS_PER_SEARCH = 100;
/** Tokens of query and document Cohere reads as one document; a longer one is split, each part counting as a document. */
const TOKENS_PER_CHUNK = 510;

const encoder = new TextEncoder();

/** Searches for `chunks` documents after splitting: whole units of 100, at least one. */
const searchesOf = (chunks: number) => Math.max(1, Math.ceil(chunks / DOCUMENTS_PER_SEARCH));

/**
 * The searches a rerank is expected to be billed, as Cohere counts them (a query with up to
 * 100 documents, a document past 510 tokens with its query split into several): from the
 * gateway's token estimate, and at most, counting a byte a token, which no tokenizer
 * exceeds. The most is held; the estimate is charged when the upstream says nothing.
 */
export function rerankSearchUnits(query: string, documents: readonly string[]): { estimated: number; most: number } {
  const queryTokens = estimateTokens(query);
  const queryBytes = encoder.encode(query).length;
  let estimatedChunks = 0;
  let mostChunks = 0;
  for (const document of documents) {
    estimatedChunks += Math.max(1, Math.ceil((queryTokens + estimateTokens(document)) / TOKENS_PER_CHUNK));
    mostChunks += Math.max(1, Math.ceil((queryBytes + encoder.encode(document).length) / TOKENS_PER_CHUNK));
  }
  return { estimated: searchesOf(estimatedChunks), most: searchesOf(mostChunks) };
}
