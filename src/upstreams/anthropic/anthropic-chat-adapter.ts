import * as v from "valibot";
import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import { postJson } from "../http.ts";
import { readJsonAs } from "../read-body.ts";
import { TokenCountSchema } from "../../lib/schemas.ts";
import { readChatResponse, readChatStream, tokenCountOf, type ChatWire } from "../chat-wire.ts";
import { translationWarnings, withCallerBody } from "../caller-body.ts";
import { convertCanonicalToAnthropicRequest, warnOfContinuedTurn } from "../../translate/anthropic-messages/convert-canonical-to-request.ts";
import { AnthropicResponseSchema, convertAnthropicResponseToCanonical } from "../../translate/anthropic-messages/convert-response.ts";
import { decodeAnthropicEvents } from "../../translate/anthropic-messages/convert-stream.ts";

const ANTHROPIC_WIRE: ChatWire<typeof AnthropicResponseSchema> = {
  format: "anthropic",
  responseSchema: AnthropicResponseSchema,
  toCanonical: convertAnthropicResponseToCanonical,
  decodeStream: decodeAnthropicEvents,
};

/** The API version every Anthropic request names; the wire format below follows it. */
const ANTHROPIC_VERSION = "2023-06-01";

/** The channel's key and the API version, and for an anthropic caller its own beta flags (`anthropic-beta`). */
function headersOf(request: ChatRequest, call: UpstreamCall): Record<string, string> {
  const callerHeaders = request.native?.format === "anthropic" ? request.native.headers : undefined;
  return { ...callerHeaders, "anthropic-version": ANTHROPIC_VERSION, ...(call.channel.apiKey ? { "x-api-key": call.channel.apiKey } : {}) };
}

/** The answer of count_tokens: the field used, the rest kept for an anthropic caller. */
const CountSchema = v.looseObject({ input_tokens: TokenCountSchema });

/** A translated body with a same-format caller's own body laid over it, the model remapped. */
function withAnthropicCallerBody(request: ChatRequest, translated: Record<string, unknown>): Record<string, unknown> {
  return withCallerBody(request, "anthropic", translated, ["model"]);
}

/** A messages body: translated from canonical, with a same-format caller's own body laid over it. */
function bodyOf(request: ChatRequest, call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const warnings = translationWarnings(request, "anthropic", call.warnings);
  const translated = convertCanonicalToAnthropicRequest({ ...request, stream }, call.upstreamModel, warnings);
  warnOfContinuedTurn(request, translated.messages, warnings);
  return withAnthropicCallerBody(request, translated);
}

/**
 * A count_tokens body: the prompt alone. The endpoint refuses max_tokens ("Extra inputs are
 * not permitted"), which the translation always sets; a caller's own body has none to add.
 */
function countBodyOf(request: ChatRequest, call: UpstreamCall): Record<string, unknown> {
  const { max_tokens: _, ...prompt } = convertCanonicalToAnthropicRequest(request, call.upstreamModel, translationWarnings(request, "anthropic", call.warnings));
  return withAnthropicCallerBody(request, prompt);
}

/** The Anthropic messages API at the channel's base URL (the host root). */
export const anthropicChatAdapter: ChatAdapter = {
  format: ANTHROPIC_WIRE.format,
  // Anthropic, thinking, wants that turn back with its signed thinking first (see applyThinking).
  takesKeptThinking: true,
  async complete(request, call) {
    const body = bodyOf(request, call, false);
    const response = await postJson(call, `${call.channel.baseUrl}/v1/messages`, headersOf(request, call), body);
    return readChatResponse(response, ANTHROPIC_WIRE, request, call);
  },

  async stream(request, call) {
    const body = bodyOf(request, call, true);
    const response = await postJson(call, `${call.channel.baseUrl}/v1/messages`, headersOf(request, call), body);
    return readChatStream(response, ANTHROPIC_WIRE, request, call);
  },

  async countTokens(request, call) {
    const response = await postJson(call, `${call.channel.baseUrl}/v1/messages/count_tokens`, headersOf(request, call), countBodyOf(request, call));
    const body = await readJsonAs(response, call, CountSchema, "a token count");
    return tokenCountOf(body.input_tokens, body, ANTHROPIC_WIRE.format, request);
  },
};
