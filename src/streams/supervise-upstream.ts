import type { StreamPart } from "../canonical/chat.ts";
import type { BatchSource } from "./batch-source.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";
import { settleWithin, TIMED_OUT } from "./settle-within.ts";

/**
 * Watches an upstream's parts source so a broken stream ends at once and frees its
 * connection: silence longer than `idleMs` between two deliveries (a keep-alive comment, a
 * ping or a thinking delta that decodes to nothing still counts as a delivery), a read that
 * rejected (the gateway aborted it, or a step threw, with its UpstreamError's message when it
 * found the upstream at fault; a connection the upstream broke ends the body instead, see
 * readThroughStep), or an error part the decoder produced (a malformed
 * event, an upstream error event, a stream cut short) each end the source after that error,
 * and cancel the upstream read.
 */
export function superviseUpstream(source: BatchSource<StreamPart>, idleMs: number): BatchSource<StreamPart> {
  let done = false;
  const stop = (reason: string) => {
    done = true;
    source.cancel(reason).catch(() => {});
  };
  return {
    async read() {
      if (done) return null;
      try {
        const batch = await settleWithin(source.read(), idleMs);
        if (batch === TIMED_OUT) {
          stop("idle timeout");
          return [{ type: "error", message: `the upstream sent nothing for ${idleMs} ms`, timedOut: true }];
        }
        if (batch === null) done = true;
        else if (batch.some((part) => part.type === "error")) stop("upstream stream failed");
        return batch;
      } catch (error) {
        // A step that found the upstream at fault (an event past the size limit) says how.
        const message = error instanceof UpstreamError ? error.message : "the upstream connection failed mid-stream";
        stop("upstream connection failed");
        return [{ type: "error", message }];
      }
    },
    cancel(reason) {
      done = true;
      return source.cancel(reason);
    },
  };
}
