import * as v from "valibot";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { modelJsonResponse } from "../response-headers.ts";
import { MAX_EMBEDDING_INPUTS } from "./embeddings.ts";
import { serveEmbeddings } from "./serve-embeddings.ts";

/** Gemini's fields that shape an embedding for a gemini channel only; reported to the caller when another kind serves it. */
const GEMINI_ONLY_FIELDS = ["taskType", "title"] as const;

const EmbedContentSchema = v.looseObject({
  model: v.optional(v.string("must be a string")),
  content: v.object(
    {
      role: v.optional(v.string()),
      parts: v.pipe(
        v.array(v.looseObject({ text: v.string("only text parts can be embedded") }), "must be an array of parts"),
        v.minLength(1, "must contain at least one part"),
      ),
    },
    "must be a content with parts",
  ),
  outputDimensionality: v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"), v.maxValue(65_536, "must be at most 65536"))),
  taskType: v.optional(v.string()),
  title: v.optional(v.string()),
});
type EmbedContent = v.InferOutput<typeof EmbedContentSchema>;

const BatchEmbedContentsSchema = v.looseObject({
  requests: v.pipe(
    v.array(EmbedContentSchema, "must be an array of embed requests"),
    v.minLength(1, "must not be an empty array"),
    v.maxLength(MAX_EMBEDDING_INPUTS, `must have at most ${MAX_EMBEDDING_INPUTS} items`),
  ),
});

/** Where a field of request `index` is in the body: under `requests[i]` in a batch, at the top of a single request. */
function fieldPath(batch: boolean, index: number, field: string): string {
  return batch ? `requests[${index}].${field}` : field;
}

/** The text of one content: its parts joined by newlines, since a canonical input is one string (a gemini channel gets the parts). */
function textOf(request: EmbedContent, path: string): string {
  const text = request.content.parts.map((part) => part.text).join("\n");
  if (text.length === 0) throw badRequest(`Invalid '${path}': the text to embed is empty`);
  return text;
}

/**
 * POST /v1beta/models/{model}:embedContent and :batchEmbedContents: the Gemini format of
 * /v1/embeddings, which the @google/genai SDK's models.embedContent calls (batch, on the
 * Gemini API). Every request of a batch is for the model in the URL and of one size.
 */
export async function serveGeminiEmbeddings(c: Context<AppEnv>, services: Services, model: string, batch: boolean): Promise<Response> {
  const body = await readJsonBody(c.req.raw, services.config.bodyTimeoutMs);
  const requests = batch ? parseOrThrow(BatchEmbedContentsSchema, body).requests : [parseOrThrow(EmbedContentSchema, body)];
  requests.forEach((request, index) => {
    if (request.model !== undefined && request.model.replace(/^models\//, "") !== model) {
      throw badRequest(`Invalid '${fieldPath(batch, index, "model")}': '${request.model}' is not the model of the URL, 'models/${model}'`);
    }
  });
  const dimensions = requests[0]!.outputDimensionality;
  if (requests.some((request) => request.outputDimensionality !== dimensions)) {
    throw badRequest("Invalid 'outputDimensionality': every request of a batch must ask for the same size");
  }
  const unforwarded = GEMINI_ONLY_FIELDS.filter((field) => requests.some((request) => request[field] !== undefined));
  const { vectors, meta } = await serveEmbeddings(
    c,
    services,
    {
      model,
      inputs: requests.map((request, index) => textOf(request, fieldPath(batch, index, "content"))),
      ...(dimensions === undefined ? {} : { dimensions }),
      native: { format: "gemini", requests: requests.map(({ model: _model, ...sent }) => sent) },
    },
    unforwarded,
  );
  const embeddings = vectors.map((values) => ({ values }));
  return modelJsonResponse(batch ? { embeddings } : { embedding: embeddings[0] }, meta);
}
