import type { UpstreamCall } from "../adapter.ts";

/** The channel's key as OpenAI-compatible APIs take it: a Bearer token. */
export function openAiAuthHeaders(call: UpstreamCall): Record<string, string> {
  return call.channel.apiKey ? { authorization: `Bearer ${call.channel.apiKey}` } : {};
}
