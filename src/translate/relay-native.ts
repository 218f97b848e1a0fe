import type { StreamFailure, StreamPart, Usage } from "../canonical/chat.ts";
import { formatSseEvent, type SseEvent } from "../streams/sse.ts";
import type { StepOutput, StreamStep } from "../streams/stream-step.ts";

/** An upstream event in the caller's own format. */
export type NativePart = Extract<StreamPart, { type: "native" }>;

/** How one format's events are relayed to a caller of that same format. */
export interface RelayRules {
  /**
   * The event as the caller receives it, or null to leave it out. An event held to the
   * stream's end is given the usage billed, to write where the upstream reported none.
   */
  render(part: NativePart, billed?: Usage): string | null;
  /** Whether the event ends the response: it (and anything after it) waits for the stream's end. */
  ends?(part: NativePart): boolean;
  /** Whether the event is the upstream's own error event: relayed as it came, it ends the stream. */
  fails?(part: NativePart): boolean;
  /** This format's event for a failure after the stream began. */
  errorEvent(failure: StreamFailure): string;
  /** What the gateway sends after a complete stream (OpenAI's `[DONE]`), given the usage billed. */
  closing?(billed: Usage | undefined): string;
}

/**
 * Native passthrough of a stream: the upstream's own events, in order and unchanged but for
 * what `rules.render` rewrites (the model name, a missing usage), so fields the gateway does
 * not know reach the caller. Canonical parts are not shown; the last usage part is what was
 * billed (the dispatcher adds its estimate at the end when the upstream reported none). An
 * error part becomes the format's error event and ends the stream. The events that end the
 * response are held back to the stream's end, which comes only after its usage row is committed.
 */
export function relayNativeEvents(rules: RelayRules): StreamStep<StreamPart, string> {
  const held: NativePart[] = [];
  let billed: Usage | undefined;
  let failed = false;
  const relay = (part: NativePart, output: StepOutput<string>, usage?: Usage) => {
    const text = rules.render(part, usage);
    if (text !== null) output.enqueue(text);
  };
  return {
    transform(part, output) {
      if (failed) return;
      if (part.type === "error") {
        failed = true;
        output.enqueue(rules.errorEvent(part));
        return;
      }
      if (part.type === "usage") billed = part.usage;
      if (part.type !== "native") return;
      if (rules.fails?.(part)) failed = true;
      if (!failed && (held.length > 0 || rules.ends?.(part))) held.push(part);
      else relay(part, output);
    },
    flush(output) {
      if (failed) return;
      for (const part of held) relay(part, output, billed);
      if (rules.closing) output.enqueue(rules.closing(billed));
    },
  };
}

/** Where a format's responses carry usage, and canonical usage in its terms. */
export interface UsageField {
  name: string;
  /** The counts the format's usage always holds (spec 2.2, 2.3, 2.4). */
  counts: readonly string[];
  render(usage: Usage): Record<string, unknown>;
}

function lacksCount(usage: object, counts: readonly string[]): boolean {
  for (const name of counts) if ((usage as Record<string, unknown>)[name] == null) return true;
  return false;
}

/**
 * `body` with the usage billed in its usage field when the upstream left that out or null, so
 * the caller always reads counts (spec 2.2); the same object otherwise.
 */
export function withBilledUsage(body: Record<string, unknown>, field: UsageField, billed: Usage | null | undefined): Record<string, unknown> {
  return billed == null || body[field.name] != null ? body : { ...body, [field.name]: field.render(billed) };
}

/**
 * A whole response's `body` with every count spec 2.2-2.4 lists in its usage: as
 * withBilledUsage, and each count the upstream left out of its usage taken from the usage
 * billed (Gemini leaves out a count of 0, as candidatesTokenCount when the whole answer was
 * thinking; some OpenAI-compatible servers send no total_tokens). The same object when none is missing.
 */
export function withEveryUsageCount(body: Record<string, unknown>, field: UsageField, billed: Usage | null | undefined): Record<string, unknown> {
  const shown = withBilledUsage(body, field, billed);
  const usage = shown[field.name];
  if (billed == null || shown !== body || typeof usage !== "object" || usage === null || !lacksCount(usage, field.counts)) return shown;
  const rendered = field.render(billed);
  const filled: Record<string, unknown> = { ...usage };
  for (const name of field.counts) filled[name] ??= rendered[name];
  return { ...body, [field.name]: filled };
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
