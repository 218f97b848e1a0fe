import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { CompactRequestSchema, InputTokensRequestSchema, ResponsesRequestSchema, TriggeredRequestSchema, type ResponsesRequest } from "../../translate/openai-responses/request-schema.ts";
import { convertResponsesRequestToCanonical } from "../../translate/openai-responses/convert-request-to-canonical.ts";
import { convertCanonicalToResponsesResponse, type OutputItem } from "../../translate/openai-responses/convert-response.ts";
import { resolveItemReferences } from "../../translate/openai-responses/resolve-item-references.ts";
import { conversationBefore, inputItemsOf } from "../../translate/openai-responses/continue-conversation.ts";
import { renderResponsesEvents } from "../../translate/openai-responses/convert-stream.ts";
import { echoedSettingsOf, responseIdOf, RESPONSES_USAGE_FIELD, type ResponseObject } from "../../translate/openai-responses/response-object.ts";
import { namespacedNamesOf } from "../../translate/openai-responses/namespaced-tools.ts";
import { compactedResponseOf, compactionRequestOf, compactionResponseOf, compactionTriggerTakenOff } from "../../translate/openai-responses/compact-conversation.ts";
import { renderCompactionEvents } from "../../translate/openai-responses/compaction-stream.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { serveChat, type ChatFormat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";

/** An upstream never speaks the Responses API, so nothing is ever relayed to its caller. */
function noRelay(): never {
  throw new Error("the Responses API has no native upstream to relay");
}

/** POST /v1/responses/compact asks for its compaction whole (its request says `stream: false`), so it is never rendered as a stream. */
function noStream(): never {
  throw new Error("a compaction is never streamed");
}

/** Why a Response that compacts is not kept, told to a caller that did not say `store: false`. */
const COMPACTION_NOT_KEPT = "store: a Response that compacts is not kept: its compaction item, sent back in input, carries the conversation";

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
 * A conversation (a Responses body in canonical form) compacted: the model is asked for its
 * summary as a chat request, on the chat path (holds, billing, rate limits, usage rows), and
 * the answer rendered by `render`.
 */
function serveCompaction(c: Context<AppEnv>, services: Services, conversation: ChatRequest, stream: boolean, render: Pick<ChatFormat, "renderResponse" | "renderStream">) {
  const request = applyVariantDefaults({ ...compactionRequestOf(conversation), stream }, services.config.variant);
  return serveChat(c, services, request, { ...render, relayStream: noRelay, modelField: "model", usageField: RESPONSES_USAGE_FIELD });
}

/**
 * POST /v1/responses whose input ended with a compaction_trigger, taken off `raw` (see
 * compactionTriggerTakenOff): the conversation before it compacted as POST
 * /v1/responses/compact compacts one, but answered as a Response whose one output item is the
 * compaction, streamed when asked; Codex CLI compacts so through OpenAI's own provider. The
 * Response is not kept, as a compacted one is not: its compaction item is what the caller
 * sends back, and keeping the whole conversation it replaces, to be put back whole by a
 * previous_response_id, would undo the compaction.
 */
function serveCompactionTrigger(c: Context<AppEnv>, services: Services, raw: unknown) {
  const parsed = parseOrThrow(TriggeredRequestSchema, raw);
  const { body, earlier } = withKeptState(c, services, { ...parsed, store: false });
  if (body.input.length === 0 && earlier.length === 0) {
    throw badRequest("Invalid 'input': a compaction_trigger needs a conversation before it to compact, in input or by previous_response_id", "input");
  }
  const namespaced = namespacedNamesOf(body.tools);
  const conversation = convertResponsesRequestToCanonical(body, earlier, namespaced);
  if (parsed.store !== false) conversation.unhonoured = [...(conversation.unhonoured ?? []), COMPACTION_NOT_KEPT];
  const head = { id: responseIdOf(c.get("requestId")), model: body.model, echo: echoedSettingsOf(body, conversation, namespaced) };
  return serveCompaction(c, services, conversation, body.stream === true, {
    renderResponse: (answer) => compactionResponseOf(answer, { ...head, createdAt: answer.created }),
    renderStream: () => renderCompactionEvents(head, services.now),
  });
}

/**
 * POST /v1/responses, OpenAI's Responses API, plain and streamed: served as chat is (the
 * chat permission, holds, billing, rate limits, usage rows), always through the canonical
 * form, since OpenAI-compatible upstreams rarely serve /responses. And
 * POST /v1/responses/input_tokens, the input tokens of such a prompt, counted as
 * /v1/messages/count_tokens counts. And POST /v1/responses/compact, a conversation compacted
 * into the model's summary of it, a model call served and billed as a chat request is; a
 * /v1/responses request whose input ends with a compaction_trigger is compacted so too.
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
      const id = responseIdOf(c.get("requestId"));
      return serveCompaction(c, services, conversation, false, {
        renderResponse: (answer) => compactedResponseOf(answer, id, [...earlier, ...inputItemsOf(body.input)]),
        renderStream: noStream,
      });
    })
    .post("/v1/responses", requireApiKey(services, "chat"), async (c) => {
      const raw = await readJsonBody(c.req.raw, services.config.bodyTimeoutMs);
      const triggered = compactionTriggerTakenOff(raw);
      if (triggered) return serveCompactionTrigger(c, services, triggered);
      const { owner, body, earlier } = withKeptState(c, services, parseOrThrow(ResponsesRequestSchema, raw));
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
