import * as v from "valibot";
import type { ChatAdapter, UpstreamCall } from "../adapter.ts";
import { postJson, readJson } from "../http.ts";
import { UpstreamError } from "../upstream-error.ts";
import { parseSseStream } from "../../streams/sse.ts";
import { convertCanonicalToOpenAiChatRequest } from "../../translate/openai-chat/convert-canonical-to-request.ts";
import { convertOpenAiChatResponseToCanonical, OpenAiChatResponseSchema } from "../../translate/openai-chat/convert-response.ts";
import { openAiChunksToParts } from "../../translate/openai-chat/convert-stream.ts";

function headersOf(call: UpstreamCall): Record<string, string> {
  return call.channel.apiKey ? { authorization: `Bearer ${call.channel.apiKey}` } : {};
}

/** Any OpenAI-compatible chat-completions API at the channel's base URL (which includes /v1). */
export const openAiChatAdapter: ChatAdapter = {
  async complete(request, call) {
    const body = convertCanonicalToOpenAiChatRequest({ ...request, stream: false }, call.upstreamModel, call.warnings);
    const response = await postJson(call.fetch, `${call.channel.baseUrl}/chat/completions`, headersOf(call), body, call.signal, call.firstByteTimeoutMs);
    const parsed = v.safeParse(OpenAiChatResponseSchema, await readJson(response));
    if (!parsed.success) throw new UpstreamError("protocol", "upstream sent a chat completion of an unexpected shape");
    return convertOpenAiChatResponseToCanonical(parsed.output, call.now());
  },

  async stream(request, call) {
    const body = convertCanonicalToOpenAiChatRequest({ ...request, stream: true }, call.upstreamModel, call.warnings);
    const response = await postJson(call.fetch, `${call.channel.baseUrl}/chat/completions`, headersOf(call), body, call.signal, call.firstByteTimeoutMs);
    if (!response.body) throw new UpstreamError("protocol", "upstream sent no stream body");
    return parseSseStream(response.body).pipeThrough(openAiChunksToParts(call.now));
  },
};
