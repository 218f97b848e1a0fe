import { afterTurn } from "../lib/next-turn.ts";

/**
 * A byte stream that takes the next of `slices` only when its reader asks for one, and only
 * on a later event-loop turn: output that is long to compute (mock audio) is made a slice at a
 * time, with every other request's I/O running in between, and no further once the reader
 * cancels.
 */
export function sliceStream(slices: Iterator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // A reader that is always ready (a fast socket) would pull again at once, so the
        // whole output would still be one block without this wait.
        await afterTurn();
        const next = slices.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel() {
        slices.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
