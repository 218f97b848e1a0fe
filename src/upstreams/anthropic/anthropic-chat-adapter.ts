import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import { postJson } from "../http.ts";
import { readChatResponse, readChatStream, type ChatWire } from "../chat-wire.ts";
import { convertCanonicalToAnthropicRequest } from "../../translate/anthropic-messages/convert-canonical-to-request.ts";
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

/** Translated from canonical, with a same-format caller's own body laid over it, the model remapped. */
function bodyOf(request: ChatRequest, call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const body = convertCanonicalToAnthropicRequest({ ...request, stream }, call.upstreamModel, call.warnings);
  if (request.native?.format !== "anthropic") return body;
  return { ...body, ...request.native.body, model: call.upstreamModel };
}

/** The Anthropic messages API at the channel's base URL (the host root). */
export const anthropicChatAdapter: ChatAdapter = {
  format: ANTHROPIC_WIRE.format,
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
};
