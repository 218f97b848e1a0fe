import type { StreamPart } from "../canonical/chat.ts";
import { pastBodyLimit } from "../upstreams/upstream-error.ts";
import type { StreamStep } from "./stream-step.ts";

/**
 * Ends a stream of parts with an error part once the arguments of its tool calls, together,
 * pass `maxLength` characters. Renderers gather arguments across events: Gemini's sends each
 * call whole, Anthropic's keeps the open call's arguments and gathers the calls waiting behind
 * it. Each event being bounded, an upstream that streamed one endless call in small pieces
 * still grew the heap as an endless event would; what renderers hold is at most this total.
 */
export function boundToolArguments(maxLength: number): StreamStep<StreamPart, StreamPart> {
  let length = 0;
  let failed = false;
  return {
    transform(part, output) {
      if (failed) return;
      if (part.type === "tool-call-delta") {
        length += part.argumentsDelta.length;
        if (length > maxLength) {
          failed = true;
          output.enqueue({ type: "error", message: pastBodyLimit("the upstream sent tool call arguments larger than", maxLength).message });
          return;
        }
      }
      output.enqueue(part);
    },
  };
}
