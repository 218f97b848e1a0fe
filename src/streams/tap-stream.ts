import type { BatchSource } from "./batch-source.ts";

/**
 * How a tapped stream ended. "stalled": its deadline passed while it waited for its reader,
 * a client that stopped reading without hanging up; "failed" is the upstream's doing (a read
 * that broke, or the deadline passing while a read waited on the upstream).
 */
export type StreamEnd = "complete" | "cancelled" | "failed" | "stalled";

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
  /**
   * The call's deadline (aborted when it passes or the client leaves) and the client's own
   * signal: a deadline that aborts before the stream ended ends it then: "cancelled" when the
   * client left, "failed" while a read waited on the upstream, else "stalled". A client that
   * stopped reading without hanging up pulls no more, so neither the stream's end nor its
   * cancel would come until it leaves.
   */
  deadline?: { signal: AbortSignal; client: AbortSignal };
}

/**
 * Calls `hooks.onEnd` the first time only (at the stream's end, or when its deadline aborts
 * first); a later call gets the first one's promise, so an end still waits for the settlement.
 * `reading` says whether a read of the upstream is in flight.
 */
function endOnce<T>(hooks: TapHooks<T>, reading: () => boolean): TapHooks<T>["onEnd"] {
  let ending: Promise<void> | null = null;
  const end: TapHooks<T>["onEnd"] = (how, error) => (ending ??= hooks.onEnd(how, error));
  const deadline = hooks.deadline;
  if (deadline) {
    // Its failure reaches the stream's own end, which waits for the same settlement.
    const how = (): StreamEnd => (deadline.client.aborted ? "cancelled" : reading() ? "failed" : "stalled");
    const expire = () => void end(how(), deadline.signal.reason).catch(() => {});
    if (deadline.signal.aborted) expire();
    else deadline.signal.addEventListener("abort", expire, { once: true });
  }
  return end;
}

/**
 * Passes what `reader` reads through as a stream, pull by pull (so a slow reader applies
 * backpressure upstream and nothing is buffered without bound), calling `onEnd` exactly once
 * whether the stream completes, fails or the reader cancels (a client that disconnected). A
 * failed read errors the stream (with `errorReason`'s value), so the server cuts the response
 * off and the client sees a body without its proper end; `onEnd` gets the error to log.
 */
export function tapStream<T>(reader: ChunkReader<T>, hooks: TapHooks<T>): ReadableStream<T> {
  let reading = false;
  const end = endOnce(hooks, () => reading);
  return new ReadableStream<T>(
    {
      async pull(controller) {
        let result: Awaited<ReturnType<typeof reader.read>>;
        reading = true;
        try {
          result = await reader.read();
        } catch (error) {
          await end("failed", error).catch(() => {});
          controller.error(hooks.errorReason ? hooks.errorReason(error) : error);
          return;
        } finally {
          reading = false;
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
  let reading = false;
  const end = endOnce(hooks, () => reading);
  return {
    async read() {
      let batch: T[] | null;
      reading = true;
      try {
        batch = await source.read();
      } catch (error) {
        await end("failed", error).catch(() => {});
        throw error;
      } finally {
        reading = false;
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
