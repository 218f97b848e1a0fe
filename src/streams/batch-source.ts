import type { StepOutput, StreamStep } from "./stream-step.ts";
import { readAhead, type BodyReader } from "./read-ahead.ts";

/**
 * A pull source of items in batches, one batch per upstream delivery, so what arrived
 * together leaves together and nothing waits for more. Cheaper than a ReadableStream per
 * stage: wrapping one is a function call, not a queue.
 */
export interface BatchSource<T> {
  /**
   * The next batch, or null at the end; rejects when the upstream fails. A batch may be
   * empty (a delivery of half an event, or a keep-alive comment): the upstream is alive.
   */
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

/** A source of what `items` yields, an item a batch, each made only when it is read; cancelling ends the generator. */
export function batchesFrom<T>(items: AsyncGenerator<T, void>): BatchSource<T> {
  return {
    read: async () => {
      const next = await items.next();
      return next.done ? null : [next.value];
    },
    cancel: async () => {
      await items.return();
    },
  };
}

/** `source`, and once it has ended the batch `last` gives then, unless that is empty. */
export function endingWith<T>(source: BatchSource<T>, last: () => T[]): BatchSource<T> {
  let ended = false;
  return {
    async read() {
      if (ended) return null;
      const batch = await source.read();
      if (batch !== null) return batch;
      ended = true;
      const tail = last();
      return tail.length > 0 ? tail : null;
    },
    cancel: (reason) => source.cancel(reason),
  };
}

/** What a read that the upstream broke counts as: the end of the body (see readThroughStep). */
const CONNECTION_BROKEN = { done: true, value: undefined } as const;

/** How long the rest of a body is read after its end event, so the connection can be reused, before it is dropped. */
const DRAIN_AFTER_END_MS = 2_000;

/** How much of a body is read ahead of the caller (see readAhead): far more than a chat answer's events. */
const READ_AHEAD_BYTES = 256 * 1024;

/** Reads what is left of a body in the background; cancels it if it has not ended within `ms`. */
function drainBody(reader: BodyReader, ms: number): void {
  const timer = setTimeout(() => reader.cancel().catch(() => {}), ms);
  const next = (): Promise<void> => reader.read().then(({ done }) => (done ? undefined : next()));
  next().catch(() => {}).finally(() => clearTimeout(timer));
}

/**
 * A response body read as UTF-8 text (a character split across deliveries included) and
 * run through `step`: what the step made of each delivery is one batch, empty when it made
 * nothing of it. A connection the upstream breaks ends the body as a close does, and the
 * step's flush decides what that means: only the step knows whether what came was whole (an
 * upstream that sent its last event and then reset the connection lost nothing), and a
 * decoder reports a stream cut short as an error part either way. A read that failed because
 * `aborted` fired (the caller left, the deadline passed) is the gateway's own doing, not an
 * end of the body: it rejects. Once the step has seen its end event the stream ends there:
 * an upstream that keeps the connection open after it no longer holds the caller.
 */
export function readThroughStep<T>(body: ReadableStream<Uint8Array>, step: StreamStep<string, T>, aborted: AbortSignal): BatchSource<T> {
  const reader = readAhead(body, READ_AHEAD_BYTES);
  const decoder = new TextDecoder();
  let batch: T[] = [];
  const output: StepOutput<T> = { enqueue: (item) => void batch.push(item) };
  let ended = false;
  return {
    async read() {
      if (ended) return null;
      const { done, value } = await reader.read().catch((error: unknown) => {
        if (aborted.aborted) throw error;
        return CONNECTION_BROKEN;
      });
      if (done) {
        ended = true;
        const tail = decoder.decode();
        if (tail) step.transform(tail, output);
        step.flush?.(output);
        if (batch.length === 0) return null;
      } else {
        step.transform(decoder.decode(value, { stream: true }), output);
        if (step.ended?.()) {
          ended = true;
          step.flush?.(output);
          drainBody(reader, DRAIN_AFTER_END_MS);
        }
      }
      const delivered = batch;
      batch = [];
      return delivered;
    },
    cancel(reason) {
      ended = true;
      return reader.cancel(reason);
    },
  };
}

