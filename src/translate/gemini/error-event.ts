import { geminiErrorObject } from "../../errors/google-status.ts";
import type { GeminiFraming } from "./stream-framing.ts";
import type { StreamFailure } from "../../canonical/chat.ts";
import { streamFailureStatus } from "../stream-failure-status.ts";

/**
 * The event (in a JSON array, the last element) that ends a Gemini caller's broken stream, as
 * `framing` writes it: the spec's error shape plus Google's `status` string, which the genai
 * SDK puts in the message of the error it raises ("got status: UNAVAILABLE"). Gemini's own
 * streams fail with UNAVAILABLE when the model side breaks off, and a retry may succeed, as it
 * may here.
 */
export function geminiErrorEvent(failure: StreamFailure, framing: GeminiFraming): string {
  return framing.chunk(JSON.stringify({ error: geminiErrorObject(streamFailureStatus(failure), failure.message) }));
}
