import type { UpstreamCall } from "../adapter.ts";
import { postJson } from "../http.ts";
import { UpstreamError } from "../upstream-error.ts";

/** The channel's key as the Gemini API takes it. */
function geminiAuthHeaders(call: UpstreamCall): Record<string, string> {
  return call.channel.apiKey ? { "x-goog-api-key": call.channel.apiKey } : {};
}

/**
 * POSTs JSON to the Gemini API with the channel's key. Gemini answers a wrong API key with
 * 400 (reason API_KEY_INVALID), not 401. That is the channel's fault, not the caller's: it is
 * re-typed as a 401 so it fails over, counts against the channel and shows as 502, on every
 * endpoint a gemini channel serves.
 */
export async function postToGemini(call: UpstreamCall, url: string, body: unknown): Promise<Response> {
  try {
    return await postJson(call, url, geminiAuthHeaders(call), body);
  } catch (error) {
    if (error instanceof UpstreamError && error.upstreamStatus === 400 && /API key not valid|API_KEY_INVALID/i.test(error.message)) {
      throw new UpstreamError("status", "the channel's API key was rejected", 401);
    }
    throw error;
  }
}
