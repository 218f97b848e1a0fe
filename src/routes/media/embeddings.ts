import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { fieldsOutside, parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NonEmptyStringSchema } from "../../lib/schemas.ts";
import { encodeFloat32Base64 } from "../../lib/float32-base64.ts";
import { serveEmbeddings } from "./serve-embeddings.ts";
import { modelJsonResponse } from "../response-headers.ts";
import type { EmbeddingInput } from "../../canonical/media.ts";

/** Inputs per request, as OpenAI's embeddings endpoint allows. */
export const MAX_EMBEDDING_INPUTS = 2048;

/** One input as token IDs: what OpenAI's tokenizers produce, non-negative whole numbers. */
const TokenIdsSchema = v.pipe(
  v.array(v.pipe(v.number(), v.integer("token IDs must be integers"), v.minValue(0, "token IDs must not be negative")), "must be an array of token IDs"),
  v.minLength(1, "must not be an empty array"),
);

const batchOf = <S extends v.GenericSchema>(item: S, what: string) =>
  v.pipe(
    v.array(item, what),
    v.minLength(1, "must not be an empty array"),
    v.maxLength(MAX_EMBEDDING_INPUTS, `must have at most ${MAX_EMBEDDING_INPUTS} items`),
  );

const EmbeddingsRequestSchema = v.object({
  model: ModelIdSchema,
  // OpenAI's four forms: a text, texts, one input as token IDs, or several.
  input: v.union(
    [NonEmptyStringSchema, batchOf(NonEmptyStringSchema, "must be an array of strings"), TokenIdsSchema, batchOf(TokenIdsSchema, "must be an array of token ID arrays")],
    "must be a non-empty string, a non-empty array of non-empty strings, or token IDs (an array of integers, or an array of such arrays)",
  ),
  encoding_format: v.optional(v.picklist(["float", "base64"], "must be 'float' or 'base64'"), "float"),
  dimensions: v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"), v.maxValue(65_536, "must be at most 65536"))),
});

/** The inputs of any of the four forms, as a list: a lone text or a lone token array is one input. */
function oneOrMany(input: string | string[] | number[] | number[][]): EmbeddingInput[] {
  if (typeof input === "string" || isTokenIds(input)) return [input];
  return input;
}

const isTokenIds = (input: readonly unknown[]): input is number[] => typeof input[0] === "number";

/** POST /v1/embeddings (spec 4.6). */
export function embeddingsRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/embeddings", requireApiKey(services, "embeddings"), async (c) => {
    const raw = await readJsonBody(c.req.raw, services.config.bodyTimeoutMs);
    const body = parseOrThrow(EmbeddingsRequestSchema, raw);
    const inputs = oneOrMany(body.input);
    // `user` and whatever else OpenAI's API takes that the gateway does not model.
    const fields = fieldsOutside(EmbeddingsRequestSchema, raw);
    const request = {
      model: body.model,
      inputs,
      ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
      native: { format: "openai" as const, fields },
    };
    const { vectors, inputTokens, meta } = await serveEmbeddings(c, services, request, Object.keys(fields));
    const data = vectors.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: body.encoding_format === "base64" ? encodeFloat32Base64(vector) : vector,
    }));
    return modelJsonResponse({ object: "list", data, model: body.model, usage: { prompt_tokens: inputTokens, total_tokens: inputTokens } }, meta);
  });
}
