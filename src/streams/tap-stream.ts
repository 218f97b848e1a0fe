import type { BatchSource } from "./batch-source.ts";

/** How a tapped stream ended. */
export type StreamEnd = "complete" | "cancelled" | "failed";

/** The read half of a stream's reader (a ReadableStreamDefaultReader, or a wrapper of one). */
export interface ChunkReader<T> {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: T }>;
  cancel(reason?: unknown): Promise<void>;
}

interface TapHooks<T> {
  /** Sees every item before it is passed on. */
  onItem?(item: T): void;
  /**
   * Called once when the stream ends, with the error of a failed one. For "complete" the
   * stream's end waits for it, so work done here (committing the usage row) happens before
   * the client sees the end.
   */
  onEnd(end: StreamEnd, error?: unknown): Promise<void>;
  /** What a failed stream is errored with (the runtime's server shows it); default: the error. */
  errorReason?(error: unknown): unknown;
}

/** Calls `onEnd` the first time only. */
function endOnce(onEnd: TapHooks<unknown>["onEnd"]): TapHooks<unknown>["onEnd"] {
  let ended = false;
  return (how, error) => {
    if (ended) return Promise.resolve();
    ended = true;
    return onEnd(how, error);
  };
}

/**
 * Passes what `reader` reads through as a stream, pull by pull (so a slow reader applies
 * backpressure upstream and nothing is buffered without bound), calling `onEnd` exactly once
 * whether the stream completes, fails or the reader cancels (a client that disconnected). A
 * failed read errors the stream (with `errorReason`'s value), so the server cuts the response
 * off and the client sees a body without its proper end; `onEnd` gets the error to log.
 */
export function tapStream<T>(reader: ChunkReader<T>, hooks: TapHooks<T>): ReadableStream<T> {
  const end = endOnce(hooks.onEnd);
  return new ReadableStream<T>(
    {
      async pull(controller) {
        let result: Awaited<ReturnType<typeof reader.read>>;
        try {
          result = await reader.read();
        } catch (error) {
          await end("failed", error).catch(() => {});
          controller.error(hooks.errorReason ? hooks.errorReason(error) : error);
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
        await end("failed", error).catch(() => {});
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
