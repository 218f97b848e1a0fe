import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { InputTokensRequestSchema, ResponsesRequestSchema } from "../../translate/openai-responses/request-schema.ts";
import { convertResponsesRequestToCanonical } from "../../translate/openai-responses/convert-request-to-canonical.ts";
import { convertCanonicalToResponsesResponse, type OutputItem } from "../../translate/openai-responses/convert-response.ts";
import { resolveItemReferences } from "../../translate/openai-responses/resolve-item-references.ts";
import { renderResponsesEvents } from "../../translate/openai-responses/convert-stream.ts";
import { echoedSettingsOf, responseIdOf, RESPONSES_USAGE_FIELD } from "../../translate/openai-responses/response-object.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { serveChat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";

/** An upstream never speaks the Responses API, so nothing is ever relayed to its caller. */
function noRelay(): never {
  throw new Error("the Responses API has no native upstream to relay");
}

/** Finds the output items the caller's earlier Responses were given, for its item references. */
function recallFor(c: Context<AppEnv>, services: Services): (id: string) => OutputItem | undefined {
  const owner = c.get("principal").userId;
  return (id) => services.responseItems.recall(owner, id);
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
      const parsed = parseOrThrow(InputTokensRequestSchema, await readJsonBody(c.req.raw));
      const body = { ...parsed, input: resolveItemReferences(parsed.input, recallFor(c, services)) };
      // Counting stores nothing, so it is not told that responses are not stored.
      const request = convertResponsesRequestToCanonical({ ...body, store: false });
      return serveTokenCount(c, services, request, (inputTokens) => ({ object: "response.input_tokens", input_tokens: inputTokens }));
    })
    .post("/v1/responses", requireApiKey(services, "chat"), async (c) => {
      const parsed = parseOrThrow(ResponsesRequestSchema, await readJsonBody(c.req.raw));
      const body = { ...parsed, input: resolveItemReferences(parsed.input, recallFor(c, services)) };
      const request = applyVariantDefaults(convertResponsesRequestToCanonical(body), services.config.variant);
      const head = { id: responseIdOf(c.get("requestId")), model: body.model, echo: echoedSettingsOf(body, request) };
      // As OpenAI stores a Response unless told not to, its items are kept to be referred to.
      const owner = c.get("principal").userId;
      const keep = body.store === false ? undefined : (output: OutputItem[]) => services.responseItems.keep(owner, output);
      return serveChat(c, services, request, {
        renderResponse: (response) => {
          const rendered = convertCanonicalToResponsesResponse(response, { ...head, createdAt: response.created });
          keep?.(rendered.output);
          return rendered;
        },
        renderStream: () => renderResponsesEvents(head, services.now, keep),
        relayStream: noRelay,
        modelField: "model",
        usageField: RESPONSES_USAGE_FIELD,
      });
    });
}
