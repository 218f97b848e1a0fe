import type { StreamFailure, StreamPart } from "../canonical/chat.ts";
import type { StreamStep } from "../streams/stream-step.ts";

/**
 * A caller-format renderer that stops at the first error part: the format's error event is
 * the last thing sent, and the renderer's own ending (a finish chunk, `[DONE]`) is not,
 * so a broken answer never looks complete.
 */
export function endAtError(errorEvent: (failure: StreamFailure) => string, render: StreamStep<StreamPart, string>): StreamStep<StreamPart, string> {
  let failed = false;
  return {
    transform(part, output) {
      if (failed) return;
      if (part.type !== "error") return render.transform(part, output);
      failed = true;
      output.enqueue(errorEvent(part));
    },
    flush(output) {
      if (!failed) render.flush?.(output);
    },
  };
}
