import type { StreamPart } from "../canonical/chat.ts";
import type { BatchSource } from "./batch-source.ts";

/**
 * Ends a parts source with an error part when the upstream stays silent longer than
 * `idleMs` between two deliveries, or its connection fails, cancelling the upstream read
 * so its connection is freed.
 */
export function withIdleTimeout(source: BatchSource<StreamPart>, idleMs: number): BatchSource<StreamPart> {
  let done = false;
  const fail = (message: string): StreamPart[] => {
    done = true;
    return [{ type: "error", message }];
  };
  return {
    async read() {
      if (done) return null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), idleMs);
      });
      try {
        const batch = await Promise.race([source.read(), timeout]);
        if (batch === "timeout") {
          source.cancel("idle timeout").catch(() => {});
          return fail(`the upstream sent nothing for ${idleMs} ms`);
        }
        if (batch === null) done = true;
        return batch;
      } catch {
        return fail("the upstream connection failed mid-stream");
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      done = true;
      return source.cancel(reason);
    },
  };
}
