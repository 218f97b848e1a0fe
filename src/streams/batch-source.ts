import type { StepOutput, StreamStep } from "./stream-step.ts";

/**
 * A pull source of items in batches, one batch per upstream delivery, so what arrived
 * together leaves together and nothing waits for more. Cheaper than a ReadableStream per
 * stage: wrapping one is a function call, not a queue.
 */
export interface BatchSource<T> {
  /** The next non-empty batch, or null at the end. Rejects when the upstream fails. */
  read(): Promise<T[] | null>;
  /** Stops reading and frees what the source holds (the upstream connection). */
  cancel(reason?: unknown): Promise<void>;
}

/** A source of the given batches, in order. */
export function batchesOf<T>(batches: readonly T[][]): BatchSource<T> {
  let next = 0;
  return {
    read: () => Promise.resolve(next < batches.length ? batches[next++]! : null),
    cancel: () => {
      next = batches.length;
      return Promise.resolve();
    },
  };
}

/**
 * A response body read as UTF-8 text (a character split across deliveries included) and
 * run through `step`: what the step made of each delivery is one batch, and a delivery it
 * made nothing of (half an event, a comment) is read past.
 */
export function readThroughStep<T>(body: ReadableStream<Uint8Array>, step: StreamStep<string, T>): BatchSource<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let batch: T[] = [];
  const output: StepOutput<T> = { enqueue: (item) => void batch.push(item) };
  let ended = false;
  return {
    async read() {
      while (!ended) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          const tail = decoder.decode();
          if (tail) step.transform(tail, output);
          step.flush?.(output);
        } else {
          step.transform(decoder.decode(value, { stream: true }), output);
        }
        if (batch.length > 0) {
          const full = batch;
          batch = [];
          return full;
        }
      }
      return null;
    },
    cancel(reason) {
      ended = true;
      return reader.cancel(reason);
    },
  };
}

