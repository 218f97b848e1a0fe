import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { InputTokensRequestSchema, ResponsesRequestSchema } from "../../translate/openai-responses/request-schema.ts";
import { convertResponsesRequestToCanonical } from "../../translate/openai-responses/convert-request-to-canonical.ts";
import { convertCanonicalToResponsesResponse } from "../../translate/openai-responses/convert-response.ts";
import { renderResponsesEvents } from "../../translate/openai-responses/convert-stream.ts";
import { echoedSettingsOf, responseIdOf, RESPONSES_USAGE_FIELD } from "../../translate/openai-responses/response-object.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { serveChat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";

/** An upstream never speaks the Responses API, so nothing is ever relayed to its caller. */
function noRelay(): never {
  throw new Error("the Responses API has no native upstream to relay");
}

/**
 * POST /v1/responses, OpenAI's Responses API, plain and streamed: served as chat is (the
 * chat permission, holds, billing, rate limits, usage rows), always through the canonical
 * form, since OpenAI-compatible upstreams rarely serve /responses. And
 * POST /v1/responses/input_tokens, the input tokens of such a prompt, counted as
 * /v1/messages/count_tokens counts.
 */
export function responsesRoutes(services: Services) {
  return new Hono<AppEnv>()
    .post("/v1/responses/input_tokens", requireApiKey(services, "chat"), async (c) => {
      const body = parseOrThrow(InputTokensRequestSchema, await readJsonBody(c.req.raw));
      // Counting stores nothing, so it is not told that responses are not stored.
      const request = convertResponsesRequestToCanonical({ ...body, store: false });
      return serveTokenCount(c, services, request, (inputTokens) => ({ object: "response.input_tokens", input_tokens: inputTokens }));
    })
    .post("/v1/responses", requireApiKey(services, "chat"), async (c) => {
      const body = parseOrThrow(ResponsesRequestSchema, await readJsonBody(c.req.raw));
      const request = applyVariantDefaults(convertResponsesRequestToCanonical(body), services.config.variant);
      const head = { id: responseIdOf(c.get("requestId")), model: body.model, echo: echoedSettingsOf(body, request) };
      return serveChat(c, services, request, {
        renderResponse: (response) => convertCanonicalToResponsesResponse(response, { ...head, createdAt: response.created }),
        renderStream: () => renderResponsesEvents(head, services.now),
        relayStream: noRelay,
        modelField: "model",
        usageField: RESPONSES_USAGE_FIELD,
      });
    });
}
