import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { CompactRequestSchema, InputTokensRequestSchema, ResponsesRequestSchema, type ResponsesRequest } from "../../translate/openai-responses/request-schema.ts";
import { convertResponsesRequestToCanonical } from "../../translate/openai-responses/convert-request-to-canonical.ts";
import { convertCanonicalToResponsesResponse, type OutputItem } from "../../translate/openai-responses/convert-response.ts";
import { resolveItemReferences } from "../../translate/openai-responses/resolve-item-references.ts";
import { conversationBefore, inputItemsOf } from "../../translate/openai-responses/continue-conversation.ts";
import { renderResponsesEvents } from "../../translate/openai-responses/convert-stream.ts";
import { echoedSettingsOf, responseIdOf, RESPONSES_USAGE_FIELD, type ResponseObject } from "../../translate/openai-responses/response-object.ts";
import { namespacedNamesOf } from "../../translate/openai-responses/namespaced-tools.ts";
import { compactedResponseOf, compactionRequestOf } from "../../translate/openai-responses/compact-conversation.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { serveChat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";

/** An upstream never speaks the Responses API, so nothing is ever relayed to its caller. */
function noRelay(): never {
  throw new Error("the Responses API has no native upstream to relay");
}

/** A compaction is asked for whole (its request says `stream: false`), so it is never rendered as a stream. */
function noStream(): never {
  throw new Error("a compaction is never streamed");
}

/**
 * A Responses body made whole from what the caller's earlier Responses left kept: its item
 * references replaced by the items, and the conversation it continues by
 * `previous_response_id`. Done before translation, so what the hold, the rate limits and
 * every upstream kind see is the whole conversation.
 */
function withKeptState<Body extends Pick<ResponsesRequest, "input" | "previous_response_id">>(c: Context<AppEnv>, services: Services, parsed: Body) {
  const owner = c.get("principal").userId;
  const input = resolveItemReferences(parsed.input, (id) => services.keptResponses.recallItem(owner, id));
  const earlier = conversationBefore(parsed.previous_response_id, (id) => services.keptResponses.chain(owner, id));
  return { owner, body: { ...parsed, input }, earlier };
}

/**
 * POST /v1/responses, OpenAI's Responses API, plain and streamed: served as chat is (the
 * chat permission, holds, billing, rate limits, usage rows), always through the canonical
 * form, since OpenAI-compatible upstreams rarely serve /responses. And
 * POST /v1/responses/input_tokens, the input tokens of such a prompt, counted as
 * /v1/messages/count_tokens counts. And POST /v1/responses/compact, a conversation compacted
 * into the model's summary of it, a model call served and billed as a chat request is.
 */
export function responsesRoutes(services: Services) {
  return new Hono<AppEnv>()
    .post("/v1/responses/input_tokens", requireApiKey(services, "chat"), async (c) => {
      const { body, earlier } = withKeptState(c, services, parseOrThrow(InputTokensRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)));
      // Counting stores nothing, so it is not told that responses are not stored.
      const request = convertResponsesRequestToCanonical({ ...body, store: false }, earlier, namespacedNamesOf(body.tools));
      return serveTokenCount(c, services, request, (inputTokens) => ({ object: "response.input_tokens", input_tokens: inputTokens }));
    })
    .post("/v1/responses/compact", requireApiKey(services, "chat"), async (c) => {
      const { body, earlier } = withKeptState(c, services, parseOrThrow(CompactRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)));
      // A compacted Response is not kept, so it is not told that responses are not stored.
      const conversation = convertResponsesRequestToCanonical({ ...body, store: false }, earlier);
      const request = applyVariantDefaults(compactionRequestOf(conversation), services.config.variant);
      const id = responseIdOf(c.get("requestId"));
      return serveChat(c, services, request, {
        renderResponse: (answer) => compactedResponseOf(answer, id, [...earlier, ...inputItemsOf(body.input)]),
        renderStream: noStream,
        relayStream: noRelay,
        modelField: "model",
        usageField: RESPONSES_USAGE_FIELD,
      });
    })
    .post("/v1/responses", requireApiKey(services, "chat"), async (c) => {
      const { owner, body, earlier } = withKeptState(c, services, parseOrThrow(ResponsesRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)));
      const namespaced = namespacedNamesOf(body.tools);
      const request = applyVariantDefaults(convertResponsesRequestToCanonical(body, earlier, namespaced), services.config.variant);
      const head = { id: responseIdOf(c.get("requestId")), model: body.model, echo: echoedSettingsOf(body, request, namespaced), namespaced };
      // As OpenAI stores a Response unless told not to, it is kept, to be continued, referred to and retrieved.
      let keeping: Promise<void> | undefined;
      const keep =
        body.store === false
          ? undefined
          : (response: ResponseObject<OutputItem>) =>
              void (keeping = services.keptResponses.keep(owner, { response, input: inputItemsOf(body.input), previousId: body.previous_response_id ?? undefined }));
      return serveChat(c, services, request, {
        renderResponse: (response) => {
          const rendered = convertCanonicalToResponsesResponse(response, { ...head, createdAt: response.created });
          keep?.(rendered);
          return rendered;
        },
        renderStream: () => renderResponsesEvents(head, services.now, keep),
        relayStream: noRelay,
        modelField: "model",
        usageField: RESPONSES_USAGE_FIELD,
        settled: () => keeping,
      });
    });
}
