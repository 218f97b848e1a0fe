import type { BatchSource } from "./batch-source.ts";

/** How a tapped stream ended. */
export type StreamEnd = "complete" | "cancelled" | "failed";

interface TapHooks<T> {
  /** Sees every item before it is passed on. */
  onItem?(item: T): void;
  /**
   * Called once when the stream ends. For "complete" the stream's end waits for it, so
   * work done here (committing the usage row) happens before the client sees the end.
   */
  onEnd(end: StreamEnd): Promise<void>;
}

/** Calls `onEnd` the first time only. */
function endOnce(onEnd: (end: StreamEnd) => Promise<void>): (end: StreamEnd) => Promise<void> {
  let ended = false;
  return (how) => {
    if (ended) return Promise.resolve();
    ended = true;
    return onEnd(how);
  };
}

/**
 * Passes `source` through, pull by pull (so a slow reader applies backpressure upstream and
 * nothing is buffered without bound), calling `onEnd` exactly once whether the stream
 * completes, fails or the reader cancels (a client that disconnected).
 */
export function tapStream<T>(source: ReadableStream<T>, hooks: TapHooks<T>): ReadableStream<T> {
  const reader = source.getReader();
  const end = endOnce(hooks.onEnd);
  return new ReadableStream<T>(
    {
      async pull(controller) {
        let result: Awaited<ReturnType<typeof reader.read>>;
        try {
          result = await reader.read();
        } catch (error) {
          await end("failed").catch(() => {});
          controller.error(error);
          return;
        }
        if (result.done) {
          await end("complete");
          controller.close();
          return;
        }
        hooks.onItem?.(result.value);
        controller.enqueue(result.value);
      },
      async cancel(reason) {
        // Ended first: cancelling the reader settles a read still in flight as "done",
        // which would otherwise be taken for a completed stream.
        const ending = end("cancelled");
        await reader.cancel(reason).catch(() => {});
        await ending;
      },
    },
    { highWaterMark: 0 },
  );
}

/** tapStream for a BatchSource: the same hooks, item by item. */
export function tapBatches<T>(source: BatchSource<T>, hooks: TapHooks<T>): BatchSource<T> {
  const end = endOnce(hooks.onEnd);
  return {
    async read() {
      let batch: T[] | null;
      try {
        batch = await source.read();
      } catch (error) {
        await end("failed").catch(() => {});
        throw error;
      }
      if (batch === null) {
        await end("complete");
        return null;
      }
      if (hooks.onItem) for (const item of batch) hooks.onItem(item);
      return batch;
    },
    async cancel(reason) {
      // Ended first, for the reason tapStream gives.
      const ending = end("cancelled");
      await source.cancel(reason).catch(() => {});
      await ending;
    },
  };
}
