import type { StreamPart } from "../canonical/chat.ts";
import type { NativePart } from "../translate/relay-native.ts";
import { pastBodyLimit } from "../upstreams/upstream-error.ts";
import type { StreamStep } from "./stream-step.ts";

/**
 * Ends a stream of parts with an error part once what a renderer holds across events passes
 * `maxLength` characters. Each event being bounded (sseParserStep), an upstream could still
 * grow the heap with many small ones:
 * - tool call arguments, all calls together: Gemini's renderer sends each call whole,
 *   Anthropic's keeps the open call's arguments and gathers the calls waiting behind it;
 * - native events from the one that finishes the answer (the last of several) on
 *   (`finishesAnswer`): a passthrough relay holds them until the body ends, so that the end
 *   reaches the caller only after the usage row is committed, and a Gemini stream, which has
 *   no end event, ends only with its body, however long the upstream goes on.
 */
export function boundHeldParts(maxLength: number, finishesAnswer?: (part: NativePart) => boolean): StreamStep<StreamPart, StreamPart> {
  let argumentsLength = 0;
  let finished = false;
  let heldLength = 0;
  let failed = false;
  return {
    transform(part, output) {
      if (failed) return;
      let past: string | null = null;
      if (part.type === "tool-call-delta") {
        argumentsLength += part.argumentsDelta.length;
        if (argumentsLength > maxLength) past = "the upstream sent tool call arguments larger than";
      } else if (part.type === "native" && (finished ||= finishesAnswer?.(part) ?? false)) {
        heldLength += part.event.data.length;
        if (heldLength > maxLength) past = "the upstream went on after its answer finished, past";
      }
      if (past === null) return output.enqueue(part);
      failed = true;
      output.enqueue({ type: "error", message: pastBodyLimit(past, maxLength).message });
    },
  };
}
