import type { StreamPart } from "../../canonical/chat.ts";
import { openAiErrorEvent } from "./error-event.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { nativeEventText, relayNativeEvents, withCallerModel } from "../relay-native.ts";
import { OPENAI_STREAM_END, openAiUsageChunk } from "./convert-stream.ts";

/**
 * An OpenAI upstream's chunks relayed to an OpenAI caller. The gateway always asks the
 * upstream for usage (billing needs it); a caller that did not ask for it gets neither
 * the usage chunk nor the `usage: null` the other chunks then carry, and one that did gets
 * a usage chunk of the usage billed when the upstream sent none (spec 2.2: usage is always given).
 */
export function relayOpenAiChunks(model: string, includeUsage: boolean): StreamStep<StreamPart, string> {
  let last: Record<string, unknown> = {};
  let usageSent = false;
  return relayNativeEvents({
    render({ event, body }) {
      last = body;
      usageSent ||= body.usage != null;
      const unasked = !includeUsage && "usage" in body;
      if (unasked && Array.isArray(body.choices) && body.choices.length === 0) return null;
      let shown = withCallerModel(body, model);
      if (unasked) {
        shown = { ...shown };
        delete shown.usage;
      }
      return nativeEventText(event, body, shown);
    },
    errorEvent: openAiErrorEvent,
    closing(billed) {
      const usageChunk = includeUsage && !usageSent && billed ? openAiUsageChunk({ id: last.id, created: last.created, model }, billed) : "";
      return usageChunk + OPENAI_STREAM_END;
    },
  });
}
