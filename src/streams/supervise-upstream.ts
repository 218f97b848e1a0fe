import type { StreamPart } from "../canonical/chat.ts";
import type { BatchSource } from "./batch-source.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";
import { settleWithin, TIMED_OUT } from "./settle-within.ts";
import { maskChannelKey, withoutChannelKey } from "../upstreams/mask-channel-key.ts";

/**
 * A part of a failing batch as the caller may see it: an error's message with the channel's
 * key masked, whole or in part, and an event relayed as it came (an Anthropic upstream's own
 * error event) without the key. Only failing batches are looked at: a provider quotes the key
 * it was sent in its error, and the success path pays nothing.
 */
function masked(part: StreamPart, channelKey: string | null): StreamPart {
  if (part.type === "error") return { ...part, message: maskChannelKey(part.message, channelKey) };
  if (part.type !== "native") return part;
  const data = withoutChannelKey(part.event.data, channelKey);
  return data === part.event.data ? part : { ...part, event: { ...part.event, data }, body: JSON.parse(data) as Record<string, unknown> };
}

/**
 * Watches an upstream's parts source so a broken stream ends at once and frees its
 * connection: silence longer than `idleMs` between two deliveries (a keep-alive comment, a
 * ping or a thinking delta that decodes to nothing still counts as a delivery), a read that
 * rejected (the gateway aborted it, or a step threw, with its UpstreamError's message when it
 * found the upstream at fault; a connection the upstream broke ends the body instead, see
 * readThroughStep), or an error part the decoder produced (a malformed
 * event, an upstream error event, a stream cut short) each end the source after that error,
 * and cancel the upstream read. An upstream's error may quote the key it was sent, so the
 * failing batch reaches the caller with `channelKey` masked (see masked).
 */
export function superviseUpstream(source: BatchSource<StreamPart>, idleMs: number, channelKey: string | null = null): BatchSource<StreamPart> {
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
        else if (batch.some((part) => part.type === "error")) {
          stop("upstream stream failed");
          return batch.map((part) => masked(part, channelKey));
        }
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
