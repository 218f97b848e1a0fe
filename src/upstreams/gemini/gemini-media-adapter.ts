import * as v from "valibot";
import type { MediaAdapter } from "../adapter.ts";
import { readJsonAs } from "../read-body.ts";
import { UpstreamError } from "../upstream-error.ts";
import { postToGemini } from "./gemini-auth.ts";

const TOKEN_IDS_REFUSED = "This model's upstream (Gemini) embeds text only; send the input as strings, not token IDs";

const BatchEmbedSchema = v.object({ embeddings: v.array(v.object({ values: v.array(v.number()) })) });

/** Gemini's embeddings (batchEmbedContents); it has no rerank, image, or audio endpoints of this shape. */
export const geminiMediaAdapter: MediaAdapter = {
  async embed(request, call) {
    const model = `models/${call.upstreamModel}`;
    const requests =
      request.native?.format === "gemini"
        ? request.native.requests.map((sent) => ({ ...sent, model }))
        : request.inputs.map((text) => {
            if (typeof text !== "string") throw new UpstreamError("status", TOKEN_IDS_REFUSED, 400);
            return { model, content: { parts: [{ text }] }, outputDimensionality: request.dimensions };
          });
    const url = `${call.channel.baseUrl}/v1beta/${model.split("/").map(encodeURIComponent).join("/")}:batchEmbedContents`;
    const response = await postToGemini(call, url, { requests });
    const json = await readJsonAs(response, call, BatchEmbedSchema, "embeddings");
    if (json.embeddings.length !== request.inputs.length) throw new UpstreamError("protocol", "upstream sent a different number of embeddings than inputs");
    // Gemini does not count embedding tokens; the gateway estimates them.
    return { vectors: json.embeddings.map((e) => e.values), inputTokens: null };
  },
};
