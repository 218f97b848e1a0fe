import * as v from "valibot";
import type { StreamPart } from "../../canonical/chat.ts";
import type { MediaStreamEnd } from "../../canonical/media.ts";
import type { SseEvent } from "../../streams/sse.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { parseStreamEvent, providerErrorPart, unusableEventPart } from "../parse-stream-event.ts";

// Lenient (STYLE.md habit 3): an event is relayed whole, so only its type is read here.
const MediaEventSchema = v.looseObject({ type: v.string() });

/**
 * The error part of an upstream's `{"type": "error", ...}` event: its message where it gave one
 * (at the top, as the Responses API puts it, or in an `error` object), with the status it names.
 */
function errorEventPart(json: Record<string, unknown>, data: string): Extract<StreamPart, { type: "error" }> {
  const message = json.message;
  if (typeof message !== "string" || message === "") return unusableEventPart(data);
  return providerErrorPart(`upstream error: ${message.slice(0, 500)}`, json);
}

/**
 * An OpenAI media stream's events (speech, transcription, images) as native parts, relayed as
 * they came. An event that is not a JSON object with a `type`, an error object and an error
 * event each end the stream with an error part; so does a stream that stops before its first
 * `end` event, which was cut short. It is whole once `end.count` end events have come; one that
 * ends cleanly after fewer (an upstream that made fewer images than asked) is whole too.
 */
export function decodeOpenAiMediaEvents(end: MediaStreamEnd): StreamStep<SseEvent, StreamPart> {
  let ends = 0;
  let failed = false;
  return {
    transform(event, output) {
      if (failed || ends >= end.count || event.data === "[DONE]") return;
      const parsed = parseStreamEvent(MediaEventSchema, event.data);
      if (!parsed || parsed.value.type === "error") {
        failed = true;
        output.enqueue(parsed ? errorEventPart(parsed.json, event.data) : unusableEventPart(event.data));
        return;
      }
      output.enqueue({ type: "native", event, body: parsed.json });
      if (parsed.value.type === end.type) ends++;
    },
    flush(output) {
      if (!failed && ends === 0) output.enqueue({ type: "error", message: "upstream stream ended before its last event" });
    },
    ended: () => ends >= end.count,
  };
}
