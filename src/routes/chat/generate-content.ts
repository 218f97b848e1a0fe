import { Hono, type Handler, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { notFound } from "../../errors/gateway-error.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { CountTokensRequestSchema, GenerateContentRequestSchema } from "../../translate/gemini/request-schema.ts";
import { convertGeminiCountRequestToCanonical, convertGeminiRequestToCanonical } from "../../translate/gemini/convert-request-to-canonical.ts";
import { convertCanonicalToGeminiResponse, GEMINI_USAGE_FIELD } from "../../translate/gemini/convert-response.ts";
import { renderGeminiChunks } from "../../translate/gemini/convert-stream.ts";
import { GEMINI_MODEL_FIELD, relayGeminiChunks } from "../../translate/gemini/relay-native.ts";
import { geminiFramingOf } from "../../translate/gemini/stream-framing.ts";
import { serveChat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";
import { serveGeminiEmbeddings } from "../media/gemini-embeddings.ts";
import { GEMINI_API_VERSIONS } from "../../lib/gemini-api-versions.ts";

/** Gemini's embedding actions, which need the key's embeddings permission instead of chat. */
const EMBED_ACTION = /.:(embedContent|batchEmbedContents)$/;

/**
 * POST /v1beta/models/{model}:generateContent and :streamGenerateContent (spec 4.3), and
 * :countTokens, the input tokens of such a request (`{"totalTokens": N}`). The stream is SSE
 * when `?alt=sse` asks for it, as the Gemini SDKs do, else one JSON array, as at Gemini. The
 * embedding actions share the path, so they are served here too
 * (src/routes/media/gemini-embeddings.ts).
 */
export function generateContentRoutes(services: Services) {
  const chatKey = requireApiKey(services, "chat");
  const embeddingsKey = requireApiKey(services, "embeddings");
  const keyFor: MiddlewareHandler<AppEnv> = (c, next) => (EMBED_ACTION.test(c.req.param("target") ?? "") ? embeddingsKey : chatKey)(c, next);
  const serve: Handler<AppEnv, "/models/:target{.+}"> = async (c) => {
    const target = c.req.param("target");
    const colon = target.lastIndexOf(":");
    const model = target.slice(0, colon);
    const action = target.slice(colon + 1);
    if (colon > 0 && (action === "embedContent" || action === "batchEmbedContents")) {
      return serveGeminiEmbeddings(c, services, model, action === "batchEmbedContents");
    }
    if (colon > 0 && action === "countTokens") {
      const body = parseOrThrow(CountTokensRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      return serveTokenCount(c, services, convertGeminiCountRequestToCanonical(body, model), (totalTokens) => ({ totalTokens }));
    }
    if (colon <= 0 || (action !== "generateContent" && action !== "streamGenerateContent")) {
      throw notFound(`Unknown endpoint: POST ${c.req.path}`);
    }
    const body = parseOrThrow(GenerateContentRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
    const request = convertGeminiRequestToCanonical(body, model, action === "streamGenerateContent");
    // Only a stream is framed (and only it renders, so the renderers' own default never serves).
    const framing = request.stream ? geminiFramingOf(c.req.query("alt")) : undefined;
    return serveChat(c, services, request, {
      renderResponse: convertCanonicalToGeminiResponse,
      renderStream: (model, requestId) => renderGeminiChunks(model, requestId, framing),
      relayStream: (model, answers) => relayGeminiChunks(model, answers, framing),
      modelField: GEMINI_MODEL_FIELD,
      usageField: GEMINI_USAGE_FIELD,
      streamWire: framing?.wire,
    });
  };
  // The genai SDK calls the same actions under whichever API version it is told to use.
  const routes = new Hono<AppEnv>();
  for (const version of GEMINI_API_VERSIONS) routes.post(`/${version}/models/:target{.+}`, keyFor, serve);
  return routes;
}
