import type { StreamPart } from "../canonical/chat.ts";

/**
 * Ends a parts stream with an error part when the upstream stays silent longer than
 * `idleMs` between two parts, cancelling the upstream read so its connection is freed.
 */
export function withIdleTimeout(source: ReadableStream<StreamPart>, idleMs: number): ReadableStream<StreamPart> {
  const reader = source.getReader();
  let done = false;
  return new ReadableStream<StreamPart>(
    {
      async pull(controller) {
        if (done) return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), idleMs);
        });
        try {
          const result = await Promise.race([reader.read(), timeout]);
          if (result === "timeout") {
            done = true;
            controller.enqueue({ type: "error", message: `the upstream sent nothing for ${idleMs} ms` });
            controller.close();
            reader.cancel("idle timeout").catch(() => {});
            return;
          }
          if (result.done) {
            done = true;
            controller.close();
          } else {
            controller.enqueue(result.value);
          }
        } catch {
          done = true;
          controller.enqueue({ type: "error", message: "the upstream connection failed mid-stream" });
          controller.close();
        } finally {
          clearTimeout(timer);
        }
      },
      cancel(reason) {
        done = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
