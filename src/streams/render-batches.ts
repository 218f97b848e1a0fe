import type { BatchSource } from "./batch-source.ts";
import type { StepOutput, StreamStep } from "./stream-step.ts";

/**
 * A response body: each batch of `source` rendered by `render` and sent as one write, as
 * soon as it arrives (an empty batch, or one the renderer holds back entirely, sends nothing). One
 * ReadableStream for the whole pipeline; a read waits for the client's pull, so a slow
 * client holds the upstream back instead of filling memory.
 */
export function renderBatches<T>(source: BatchSource<T>, render: StreamStep<T, string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let text = "";
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
              if (text) controller.enqueue(take());
              controller.close();
              return;
            }
            for (const item of batch) render.transform(item, output);
            if (text) {
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
