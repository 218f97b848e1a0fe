import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { CountTokensRequestSchema, MessagesRequestSchema, refuseUnaskedSystemTurns } from "../../translate/anthropic-messages/request-schema.ts";
import { convertAnthropicPromptToCanonical, convertAnthropicRequestToCanonical } from "../../translate/anthropic-messages/convert-request-to-canonical.ts";
import { convertCanonicalToAnthropicResponse, ANTHROPIC_USAGE_FIELD } from "../../translate/anthropic-messages/convert-response.ts";
import { renderAnthropicEvents } from "../../translate/anthropic-messages/convert-stream.ts";
import { relayAnthropicEvents } from "../../translate/anthropic-messages/relay-native.ts";
import { serveChat } from "./serve-chat.ts";
import { serveTokenCount } from "./serve-token-count.ts";

/** Beta features are asked for in a header; an anthropic upstream needs it to honour them. */
function withCallerBeta(c: Context<AppEnv>, request: ChatRequest): ChatRequest {
  const beta = c.req.header("anthropic-beta");
  return beta ? { ...request, native: { ...request.native!, headers: { "anthropic-beta": beta } } } : request;
}

/** `body` once its system turns, if any, were asked for by the caller's beta flags. */
function withAskedSystemTurns<Body extends { messages: readonly { role: string }[] }>(c: Context<AppEnv>, body: Body): Body {
  refuseUnaskedSystemTurns(body.messages, c.req.header("anthropic-beta"));
  return body;
}

/**
 * POST /v1/messages (spec 4.2): messages-style chat, plain and streamed; and
 * POST /v1/messages/count_tokens, the input tokens of such a prompt (`{"input_tokens": N}`).
 */
export function messagesRoutes(services: Services) {
  return new Hono<AppEnv>()
    .post("/v1/messages", requireApiKey(services, "chat"), async (c) => {
      const body = withAskedSystemTurns(c, parseOrThrow(MessagesRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)));
      return serveChat(c, services, withCallerBeta(c, convertAnthropicRequestToCanonical(body)), {
        renderResponse: convertCanonicalToAnthropicResponse,
        renderStream: renderAnthropicEvents,
        relayStream: relayAnthropicEvents,
        modelField: "model",
        usageField: ANTHROPIC_USAGE_FIELD,
        anthropicNames: true,
      });
    })
    .post("/v1/messages/count_tokens", requireApiKey(services, "chat"), async (c) => {
      const body = withAskedSystemTurns(c, parseOrThrow(CountTokensRequestSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)));
      return serveTokenCount(c, services, withCallerBeta(c, convertAnthropicPromptToCanonical(body)), (inputTokens) => ({ input_tokens: inputTokens }), {
        anthropicNames: true,
      });
    });
}
