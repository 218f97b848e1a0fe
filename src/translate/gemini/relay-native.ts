import type { StreamPart } from "../../canonical/chat.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { geminiErrorEvent } from "./error-event.ts";
import { framed, geminiFramingOf, type GeminiFraming } from "./stream-framing.ts";
import { finishedAnswers } from "../finished-answers.ts";
import { nativeEventData, relayNativeEvents, withBilledUsage, withCallerModel, type NativePart } from "../relay-native.ts";
import { GEMINI_USAGE_FIELD } from "./convert-response.ts";

/** Gemini names the model of a response in modelVersion. */
export const GEMINI_MODEL_FIELD = "modelVersion";

type CandidateFinish = { finishReason?: unknown; index?: unknown } | null;

/**
 * For one stream of `answers` candidates, whether a chunk finishes the response: the one in
 * which the last of them finishes (a finishReason), or a blocked prompt. Gemini's streams have
 * no end event. With several answers the test counts the candidates finished so far, so each
 * stream takes its own; for one, a finishReason of whatever kind will do, and the test is shared.
 */
export function finishesGeminiAnswers(answers: number): (part: NativePart) => boolean {
  return answers <= 1 ? finishesOneAnswer : finishesAllOf(finishedAnswers(answers));
}

function finishesAllOf(allFinished: (index: number) => boolean): (part: NativePart) => boolean {
  return ({ body }) => {
    if ((body.promptFeedback as { blockReason?: unknown } | undefined)?.blockReason) return true;
    let finished = false;
    if (Array.isArray(body.candidates)) {
      for (const candidate of body.candidates as CandidateFinish[]) {
        if (candidate?.finishReason) finished = allFinished(typeof candidate.index === "number" ? candidate.index : 0) || finished;
      }
    }
    return finished;
  };
}

const finishesOneAnswer = finishesAllOf(finishedAnswers(1));

/**
 * A Gemini upstream's chunks, of `answers` candidates, relayed to a Gemini caller and written
 * as `framing` says. The chunks from the one that finishes the answers on, held to the end,
 * get the usage billed when the upstream gave them no usageMetadata.
 */
export function relayGeminiChunks(model: string, answers: number, framing: GeminiFraming = geminiFramingOf("sse")): StreamStep<StreamPart, string> {
  return framed(
    framing,
    relayNativeEvents({
      render: ({ event, body }, billed) =>
        framing.chunk(nativeEventData(event, body, withBilledUsage(withCallerModel(body, model, GEMINI_MODEL_FIELD), GEMINI_USAGE_FIELD, billed))),
      ends: finishesGeminiAnswers(answers),
      errorEvent: (failure) => geminiErrorEvent(failure, framing),
    }),
  );
}
