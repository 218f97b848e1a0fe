import * as v from "valibot";
import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import { postJson, readJson } from "../http.ts";
import { UpstreamError } from "../upstream-error.ts";
import { parseSseStream } from "../../streams/sse.ts";
import { convertCanonicalToGeminiRequest } from "../../translate/gemini/convert-canonical-to-request.ts";
import { convertGeminiResponseToCanonical, GeminiResponseSchema } from "../../translate/gemini/convert-response.ts";
import { geminiChunksToParts } from "../../translate/gemini/convert-stream.ts";

function urlOf(call: UpstreamCall, action: "generateContent" | "streamGenerateContent?alt=sse"): string {
  return `${call.channel.baseUrl}/v1beta/models/${encodeURIComponent(call.upstreamModel)}:${action}`;
}

function headersOf(call: UpstreamCall): Record<string, string> {
  return call.channel.apiKey ? { "x-goog-api-key": call.channel.apiKey } : {};
}

/** The Gemini API (generativelanguage) at the channel's base URL (the host root). */
export const geminiChatAdapter: ChatAdapter = {
  async complete(request, call) {
    const body = convertCanonicalToGeminiRequest(request, call.warnings);
    const response = await postJson(call.fetch, urlOf(call, "generateContent"), headersOf(call), body, call.signal, call.firstByteTimeoutMs);
    const parsed = v.safeParse(GeminiResponseSchema, await readJson(response));
    if (!parsed.success) throw new UpstreamError("protocol", "upstream sent a response of an unexpected shape");
    return convertGeminiResponseToCanonical(parsed.output, call.now());
  },

  async stream(request, call) {
    const body = convertCanonicalToGeminiRequest(request, call.warnings);
    const response = await postJson(call.fetch, urlOf(call, "streamGenerateContent?alt=sse"), headersOf(call), body, call.signal, call.firstByteTimeoutMs);
    if (!response.body) throw new UpstreamError("protocol", "upstream sent no stream body");
    return parseSseStream(response.body).pipeThrough(geminiChunksToParts(call.now));
  },
};
