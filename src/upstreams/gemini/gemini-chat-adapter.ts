import * as v from "valibot";
import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import { postToGemini } from "./gemini-auth.ts";
import { readJsonAs } from "../read-body.ts";
import { TokenCountSchema } from "../../lib/schemas.ts";
import { readChatResponse, readChatStream, tokenCountOf, type ChatWire } from "../chat-wire.ts";
import { translationWarnings, withCallerBody } from "../caller-body.ts";
import { convertCanonicalToGeminiRequest } from "../../translate/gemini/convert-canonical-to-request.ts";
import { convertGeminiResponseToCanonical, GeminiResponseSchema } from "../../translate/gemini/convert-response.ts";
import { decodeGeminiChunks } from "../../translate/gemini/convert-stream.ts";
import { finishesGeminiAnswers } from "../../translate/gemini/relay-native.ts";
import { unusableGeminiFinish } from "../../translate/gemini/map-finish-reason.ts";

const GEMINI_WIRE: ChatWire<typeof GeminiResponseSchema> = {
  format: "gemini",
  responseSchema: GeminiResponseSchema,
  toCanonical: convertGeminiResponseToCanonical,
  // A blocked prompt has no candidates, and promptFeedback.blockReason says why.
  hasAnswer: (response) => (response.candidates?.length ?? 0) > 0 || response.promptFeedback?.blockReason !== undefined,
  unusableWhenTranslated: (response) => unusableGeminiFinish(response.candidates?.[0]?.finishReason),
  finishesAnswers: finishesGeminiAnswers,
  decodeStream: decodeGeminiChunks,
};

function urlOf(call: UpstreamCall, action: "generateContent" | "streamGenerateContent?alt=sse" | "countTokens"): string {
  return `${call.channel.baseUrl}/v1beta/models/${encodeURIComponent(call.upstreamModel)}:${action}`;
}

/** The answer of countTokens: the field used, the rest kept for a gemini caller. Proto3 JSON leaves out a count of 0. */
const CountSchema = v.looseObject({ totalTokens: v.optional(TokenCountSchema, 0) });

/** Translated from canonical, with a same-format caller's own body laid over it (the model is in the URL). */
function bodyOf(request: ChatRequest, call: UpstreamCall): Record<string, unknown> {
  return withCallerBody(request, "gemini", convertCanonicalToGeminiRequest(request, translationWarnings(request, "gemini", call.warnings)));
}

/** The Gemini API (generativelanguage) at the channel's base URL (the host root). */
export const geminiChatAdapter: ChatAdapter = {
  format: GEMINI_WIRE.format,
  async complete(request, call) {
    const body = bodyOf(request, call);
    const response = await postToGemini(call, urlOf(call, "generateContent"), body);
    return readChatResponse(response, GEMINI_WIRE, request, call);
  },

  async stream(request, call) {
    const body = bodyOf(request, call);
    const response = await postToGemini(call, urlOf(call, "streamGenerateContent?alt=sse"), body);
    return readChatStream(response, GEMINI_WIRE, request, call);
  },

  /**
   * The whole request goes as `generateContentRequest`, since only there does Gemini count the
   * system instruction and tools (bare `contents` are the messages alone); that request must
   * name its model.
   */
  async countTokens(request, call) {
    const body = { generateContentRequest: { ...bodyOf(request, call), model: `models/${call.upstreamModel}` } };
    const response = await postToGemini(call, urlOf(call, "countTokens"), body);
    const counted = await readJsonAs(response, call, CountSchema, "a token count");
    return tokenCountOf(counted.totalTokens, counted, GEMINI_WIRE.format, request);
  },
};
