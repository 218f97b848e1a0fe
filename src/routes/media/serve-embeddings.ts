import type { Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import type { EmbeddingRequest } from "../../canonical/media.ts";
import { estimateEmbeddingTokens } from "../../canonical/estimate-prompt-tokens.ts";
import { admitRequest } from "../admit-request.ts";
import type { ModelResponseMeta } from "../response-headers.ts";

/** What every embeddings endpoint renders in its own format. */
export interface ServedEmbeddings {
  vectors: number[][];
  /** The upstream's count, else the gateway's estimate: what was billed. */
  inputTokens: number;
  meta: ModelResponseMeta;
}

/**
 * Admits, bills and serves an embeddings request of any caller format. `unforwarded` names
 * request fields of the caller's format that an upstream of another kind is not sent; they
 * are reported in the warnings header rather than dropped silently (a channel of the caller's
 * own kind gets the `native` request, fields and all).
 */
export async function serveEmbeddings(
  c: Context<AppEnv>,
  services: Services,
  request: EmbeddingRequest,
  unforwarded: readonly string[] = [],
): Promise<ServedEmbeddings> {
  const estimatedTokens = estimateEmbeddingTokens(request.inputs);
  const { meter, rateLimitHeaders } = await admitRequest(c, services, {
    model: request.model,
    mode: "embedding",
    stream: false,
    maxUsage: { inputTokens: estimatedTokens, outputTokens: 0 },
  });
  const served = await services.media.call(
    request.model,
    "embed",
    meter,
    c.req.raw.signal,
    (adapter, call) => {
      const sentAsIs = request.native !== undefined && request.native.format === call.channel.type;
      if (!sentAsIs) for (const field of unforwarded) call.warnings.add(field, "not sent upstream: embeddings are requested without it");
      return adapter.embed(request, call);
    },
    (result) => ({ inputTokens: result.inputTokens ?? estimatedTokens, outputTokens: 0 }),
  );
  return {
    vectors: served.value.vectors,
    inputTokens: served.value.inputTokens ?? estimatedTokens,
    meta: { rateLimitHeaders, served, requestId: c.get("requestId") },
  };
}
