import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NonEmptyStringSchema } from "../../lib/schemas.ts";
import { encodeFloat32Base64 } from "../../lib/float32-base64.ts";
import { serveEmbeddings } from "./serve-embeddings.ts";
import { modelJsonResponse } from "../response-headers.ts";

/** Inputs per request, as OpenAI's embeddings endpoint allows. */
export const MAX_EMBEDDING_INPUTS = 2048;

const EmbeddingsRequestSchema = v.object({
  model: ModelIdSchema,
  input: v.union(
    [
      NonEmptyStringSchema,
      v.pipe(
        v.array(NonEmptyStringSchema, "must be a string or an array of strings"),
        v.minLength(1, "must not be an empty array"),
        v.maxLength(MAX_EMBEDDING_INPUTS, `must have at most ${MAX_EMBEDDING_INPUTS} items`),
      ),
    ],
    "must be a non-empty string or a non-empty array of non-empty strings",
  ),
  encoding_format: v.optional(v.picklist(["float", "base64"], "must be 'float' or 'base64'"), "float"),
  dimensions: v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"), v.maxValue(65_536, "must be at most 65536"))),
  user: v.optional(v.string()),
});

/** POST /v1/embeddings (spec 4.6). */
export function embeddingsRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/embeddings", requireApiKey(services, "embeddings"), async (c) => {
    const body = parseOrThrow(EmbeddingsRequestSchema, await readJsonBody(c.req.raw));
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    const { vectors, inputTokens, meta } = await serveEmbeddings(c, services, {
      model: body.model,
      inputs,
      ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
    });
    const data = vectors.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: body.encoding_format === "base64" ? encodeFloat32Base64(vector) : vector,
    }));
    return modelJsonResponse({ object: "list", data, model: body.model, usage: { prompt_tokens: inputTokens, total_tokens: inputTokens } }, meta);
  });
}
