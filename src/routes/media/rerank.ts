import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NonEmptyStringSchema } from "../../lib/schemas.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { rerankSearchUnits } from "./rerank-search-units.ts";
import { admitRequest } from "../admit-request.ts";
import { modelJsonResponse } from "../response-headers.ts";

/** Documents per request: Cohere's and Jina's upper bound. */
const MAX_DOCUMENTS = 10_000;

const RerankRequestSchema = v.object({
  model: ModelIdSchema,
  query: NonEmptyStringSchema,
  documents: v.pipe(
    v.array(v.string("must be a string"), "must be an array of strings"),
    v.minLength(1, "must not be empty"),
    v.maxLength(MAX_DOCUMENTS, `must have at most ${MAX_DOCUMENTS} items`),
  ),
  top_n: v.optional(v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(1, "must be at least 1"))),
  return_documents: v.optional(v.boolean("must be true or false"), false),
});

/** POST /v1/rerank (spec 4.7): documents ordered by relevance to the query, highest first. */
export function rerankRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/rerank", requireApiKey(services, "rerank"), async (c) => {
    const body = parseOrThrow(RerankRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
    // A top_n past the documents asks for all of them, as Cohere and Jina read it (LangChain sends 3 whatever the count).
    const topN = Math.min(body.top_n ?? body.documents.length, body.documents.length);
    // Every document is read against the query: the query counts once per document.
    const queryTokens = estimateTokens(body.query);
    const estimatedTokens = body.documents.reduce((sum, doc) => sum + queryTokens + estimateTokens(doc), 0);
    const searches = rerankSearchUnits(body.query, body.documents);
    const usageOf = (inputTokens: number | null, searchUnits: number) => ({ inputTokens: inputTokens ?? estimatedTokens, outputTokens: 0, documents: body.documents.length, searches: searchUnits });
    // An upstream's own count of searches is billed when the request could have made that many.
    const billedSearches = (reported: number | null | undefined) => (reported != null && reported >= 1 && reported <= searches.most ? reported : searches.estimated);
    const { meter, rateLimitHeaders } = await admitRequest(c, services, { model: body.model, mode: "rerank", stream: false, maxUsage: usageOf(null, searches.most) });
    const request = { model: body.model, query: body.query, documents: body.documents, topN, returnDocuments: body.return_documents };
    const served = await services.media.call(
      body.model,
      "rerank",
      meter,
      c.req.raw.signal,
      (adapter, call) => adapter.rerank(request, call),
      (result) => usageOf(result.inputTokens, billedSearches(result.searchUnits)),
    );
    const results = [...served.value.ranking]
      .sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index)
      .slice(0, topN)
      .map(({ index, relevanceScore }) => ({
        index,
        ...(body.return_documents ? { document: { text: body.documents[index]! } } : {}),
        relevance_score: relevanceScore,
      }));
    return modelJsonResponse(
      { id: c.get("requestId"), model: body.model, results, meta: { tokens_used: served.value.inputTokens ?? estimatedTokens } },
      { rateLimitHeaders, served, requestId: c.get("requestId") },
    );
  });
}
