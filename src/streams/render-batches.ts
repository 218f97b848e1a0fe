import type { BatchSource } from "./batch-source.ts";
import type { StepOutput, StreamStep } from "./stream-step.ts";

/**
 * How an event stream shows the caller that a silent-looking upstream is alive: when a
 * delivery renders to nothing (an upstream keep-alive comment or ping, reasoning the caller's
 * format does not show), an SSE comment is written instead, if nothing has been written for
 * `firstAfterMs` since the body began (the comment also brings the caller the response head)
 * or `everyMs` since the last write. Every official SDK skips comment lines, and a proxy in
 * front with a read timeout sees bytes.
 */
export interface KeepAlive {
  firstAfterMs: number;
  everyMs: number;
  now: () => number;
  /** When the caller began waiting (default: when the body is made); the first comment is due `firstAfterMs` after it. */
  since?: number;
  /** What is written, when not KEEP_ALIVE_COMMENT (a body that a comment would break), asked each time one is due. */
  text?: () => string;
}

/** The comment written for a keep-alive. */
export const KEEP_ALIVE_COMMENT = ": keep-alive\n\n";

/** A stream body that cannot take SSE comments: its content type (SSE's when not given), and what it writes as a keep-alive. */
export interface StreamWire {
  contentType?: string;
  keepAlive: () => string;
}

/**
 * A response body: each batch of `source` rendered by `render` and sent as one write, as
 * soon as it arrives (an empty batch, or one the renderer holds back entirely, sends nothing,
 * or a keep-alive comment when `keepAlive` is given). One ReadableStream for the whole
 * pipeline; a read waits for the client's pull, so a slow client holds the upstream back
 * instead of filling memory. What the renderer's flush writes, the stream's end, waits for
 * what `settled` gives then, if anything (a kept Response's commit), as the source's end
 * waits for its usage row.
 */
export function renderBatches<T>(
  source: BatchSource<T>,
  render: StreamStep<T, string>,
  keepAlive?: KeepAlive,
  settled?: () => Promise<void> | undefined,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let text = "";
  const began = keepAlive?.since ?? keepAlive?.now() ?? 0;
  let lastWrite: number | null = null;
  const keepAliveDue = () =>
    keepAlive !== undefined && (lastWrite === null ? keepAlive.now() - began >= keepAlive.firstAfterMs : keepAlive.now() - lastWrite >= keepAlive.everyMs);
  const output: StepOutput<string> = {
    enqueue(piece) {
      text += piece;
    },
  };
  const take = () => {
    const bytes = encoder.encode(text);
    text = "";
    return bytes;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const batch = await source.read();
            if (batch === null) {
              render.flush?.(output);
              const settling = settled?.();
              if (settling) await settling;
              if (text) controller.enqueue(take());
              controller.close();
              return;
            }
            for (const item of batch) render.transform(item, output);
            if (!text && keepAliveDue()) text = keepAlive!.text?.() ?? KEEP_ALIVE_COMMENT;
            if (text) {
              if (keepAlive) lastWrite = keepAlive.now();
              controller.enqueue(take());
              return;
            }
          }
        } catch (error) {
          // The body fails; the source (the upstream, its tap) must still be ended and freed.
          await source.cancel(error).catch(() => {});
          throw error;
        }
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
