import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import { postJson } from "../http.ts";
import { estimatePromptTokens } from "../../canonical/estimate-prompt-tokens.ts";
import { openAiAuthHeaders } from "./openai-auth.ts";
import { readChatResponse, readChatStream, type ChatWire } from "../chat-wire.ts";
import { translationWarnings, withCallerBody } from "../caller-body.ts";
import { convertCanonicalToOpenAiChatRequest } from "../../translate/openai-chat/convert-canonical-to-request.ts";
import { convertOpenAiChatResponseToCanonical, OpenAiChatResponseSchema } from "../../translate/openai-chat/convert-response.ts";
import { decodeOpenAiChunks } from "../../translate/openai-chat/convert-stream.ts";
import { TOKEN_LIMIT_FIELDS } from "../../translate/openai-chat/reasoning-model.ts";

const OPENAI_WIRE: ChatWire<typeof OpenAiChatResponseSchema> = {
  format: "openai",
  responseSchema: OpenAiChatResponseSchema,
  toCanonical: convertOpenAiChatResponseToCanonical,
  hasAnswer: (response) => response.choices.length > 0,
  decodeStream: decodeOpenAiChunks,
};

/**
 * The body to send: translated from canonical, with a same-format caller's own body laid over
 * it (see withCallerBody), the model remapped, and usage always asked for on streams, since
 * billing settles from it.
 */
function bodyOf(request: ChatRequest, call: UpstreamCall, stream: boolean): Record<string, unknown> {
  const body = convertCanonicalToOpenAiChatRequest({ ...request, stream }, call.upstreamModel, translationWarnings(request, "openai", call.warnings));
  if (request.native?.format !== "openai") return body;
  const merged = withCallerBody(request, "openai", body, ["model"]);
  // A limit the caller named goes under the caller's name (or names) only, whichever the
  // translation chose; one the gateway filled in (Variant A's default) keeps the translation's.
  const named = TOKEN_LIMIT_FIELDS.filter((field) => request.native!.body[field] != null);
  if (named.length > 0) for (const field of TOKEN_LIMIT_FIELDS) if (!named.includes(field)) delete merged[field];
  if (stream) merged.stream_options = { ...(request.native.body.stream_options as object | undefined), include_usage: true };
  return merged;
}

/** Any OpenAI-compatible chat-completions API at the channel's base URL (which includes /v1). */
export const openAiChatAdapter: ChatAdapter = {
  format: OPENAI_WIRE.format,
  async complete(request, call) {
    const body = bodyOf(request, call, false);
    const response = await postJson(call, `${call.channel.baseUrl}/chat/completions`, openAiAuthHeaders(call), body);
    return readChatResponse(response, OPENAI_WIRE, request, call);
  },

  async stream(request, call) {
    const body = bodyOf(request, call, true);
    const response = await postJson(call, `${call.channel.baseUrl}/chat/completions`, openAiAuthHeaders(call), body);
    return readChatStream(response, OPENAI_WIRE, request, call);
  },

  /** OpenAI's API has no token counting: the estimate holds are taken on, and a warning saying so. */
  async countTokens(request, call) {
    call.warnings.add("token count", "estimated by the gateway at about 4 characters a token, since the upstream's API cannot count tokens");
    return { inputTokens: estimatePromptTokens(request) };
  },
};
