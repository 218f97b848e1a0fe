import type { StreamPart } from "../canonical/chat.ts";
import { formatSseEvent, type SseEvent } from "../streams/sse.ts";
import type { StreamStep } from "../streams/stream-step.ts";

/** An upstream event in the caller's own format. */
export type NativePart = Extract<StreamPart, { type: "native" }>;

/** How one format's events are relayed to a caller of that same format. */
export interface RelayRules {
  /** The event as the caller receives it, or null to leave it out. */
  render(part: NativePart): string | null;
  /** Whether the event ends the response: it (and anything after it) waits for the stream's end. */
  ends?(part: NativePart): boolean;
  /** Whether the event is the upstream's own error event: relayed as it came, it ends the stream. */
  fails?(part: NativePart): boolean;
  /** This format's event for a failure after the stream began. */
  errorEvent(message: string): string;
  /** What the gateway sends after a complete stream (OpenAI's `[DONE]`). */
  closing?: string;
}

/**
 * Native passthrough of a stream: the upstream's own events, in order and unchanged but for
 * what `rules.render` rewrites (the model name), so fields the gateway does not know reach
 * the caller. Canonical parts are ignored (they feed billing); an error part becomes the
 * format's error event and ends the stream. The events that end the response are held back
 * to the stream's end, which comes only after its usage row is committed.
 */
export function relayNativeEvents(rules: RelayRules): StreamStep<StreamPart, string> {
  let held = "";
  let failed = false;
  return {
    transform(part, output) {
      if (failed) return;
      if (part.type === "error") {
        failed = true;
        output.enqueue(rules.errorEvent(part.message));
        return;
      }
      if (part.type !== "native") return;
      if (rules.fails?.(part)) failed = true;
      const text = rules.render(part);
      if (text === null) return;
      if (failed) output.enqueue(text);
      else if (held !== "" || rules.ends?.(part)) held += text;
      else output.enqueue(text);
    },
    flush(output) {
      if (failed) return;
      if (held !== "") output.enqueue(held);
      if (rules.closing) output.enqueue(rules.closing);
    },
  };
}

/** The event's data: as it came, or re-serialised when `shown` is a rewritten copy of `body`. */
export function nativeEventData(event: SseEvent, body: object, shown: object): string {
  return shown === body ? event.data : JSON.stringify(shown);
}

/** The event's SSE text, its data as nativeEventData gives it. */
export function nativeEventText(event: SseEvent, body: object, shown: object): string {
  return formatSseEvent(nativeEventData(event, body, shown), event.event === "message" ? undefined : event.event);
}

/**
 * Passthrough's one rewrite of what an upstream sends: where `body` names a model in
 * `field`, it names the model the caller asked for (an alias stays an alias, as in every
 * translated response). The same object when nothing changes.
 */
export function withCallerModel(body: Record<string, unknown>, model: string, field = "model"): Record<string, unknown> {
  return body[field] === undefined || body[field] === model ? body : { ...body, [field]: model };
}
