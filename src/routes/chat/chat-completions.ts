import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ChatCompletionRequestSchema } from "../../translate/openai-chat/request-schema.ts";
import { convertOpenAiChatRequestToCanonical } from "../../translate/openai-chat/convert-request-to-canonical.ts";
import { convertCanonicalToOpenAiChatResponse, OPENAI_USAGE_FIELD } from "../../translate/openai-chat/convert-response.ts";
import { renderOpenAiChunks } from "../../translate/openai-chat/convert-stream.ts";
import { relayOpenAiChunks } from "../../translate/openai-chat/relay-native.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { serveChat } from "./serve-chat.ts";

/** POST /v1/chat/completions (spec 4.1), plain and streamed. */
export function chatCompletionsRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/chat/completions", requireApiKey(services, "chat"), async (c) => {
    const body = parseOrThrow(ChatCompletionRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
    const request = applyVariantDefaults(convertOpenAiChatRequestToCanonical(body), services.config.variant);
    const includeUsage = body.stream_options?.include_usage === true;
    return serveChat(c, services, request, {
      renderResponse: convertCanonicalToOpenAiChatResponse,
      renderStream: (model, requestId) => renderOpenAiChunks({ model, includeUsage, fallbackId: requestId, now: services.now }),
      relayStream: (model) => relayOpenAiChunks(model, includeUsage),
      modelField: "model",
      usageField: OPENAI_USAGE_FIELD,
    });
  });
}
