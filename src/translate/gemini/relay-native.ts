import type { StreamPart } from "../../canonical/chat.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { geminiErrorEvent } from "./error-event.ts";
import { nativeEventText, relayNativeEvents, withCallerModel, type NativePart } from "../relay-native.ts";

/** Gemini names the model of a response in modelVersion. */
export const GEMINI_MODEL_FIELD = "modelVersion";

/** Whether a chunk finishes the answer (a finishReason, or a blocked prompt): Gemini's streams have no end event. */
export function finishesGeminiAnswer({ body }: NativePart): boolean {
  const finished = Array.isArray(body.candidates) && body.candidates.some((candidate) => (candidate as { finishReason?: unknown } | null)?.finishReason);
  return finished || Boolean((body.promptFeedback as { blockReason?: unknown } | undefined)?.blockReason);
}

/** A Gemini upstream's chunks relayed to a Gemini caller. */
export function relayGeminiChunks(model: string): StreamStep<StreamPart, string> {
  return relayNativeEvents({
    render: ({ event, body }) => nativeEventText(event, body, withCallerModel(body, model, GEMINI_MODEL_FIELD)),
    ends: finishesGeminiAnswer,
    errorEvent: geminiErrorEvent,
  });
}
