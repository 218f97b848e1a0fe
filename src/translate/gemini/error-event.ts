import { errorBody } from "../../errors/gateway-error.ts";
import { formatSseEvent } from "../../streams/sse.ts";

/**
 * The event that ends a Gemini caller's broken stream: the spec's error shape plus Google's
 * `status` string, which the genai SDK puts in the message of the error it raises
 * ("got status: UNAVAILABLE"). Gemini's own streams fail with UNAVAILABLE when the model
 * side breaks off, and a retry may succeed, as it may here.
 */
export function geminiErrorEvent(message: string): string {
  const { error } = errorBody(502, message);
  return formatSseEvent(JSON.stringify({ error: { ...error, status: "UNAVAILABLE" } }));
}
