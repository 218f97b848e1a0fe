import type { UpstreamCall } from "../adapter.ts";

/** The channel's key as the Gemini API takes it. */
export function geminiAuthHeaders(call: UpstreamCall): Record<string, string> {
  return call.channel.apiKey ? { "x-goog-api-key": call.channel.apiKey } : {};
}
