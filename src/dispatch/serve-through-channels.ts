import { upstreamModelOf, type Channel } from "../channels/channel.ts";
import type { ChannelRegistry } from "../channels/channel-registry.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { UpstreamCall } from "../upstreams/adapter.ts";
import { UpstreamWarnings } from "../upstreams/warnings.ts";
import type { ChannelBreaker } from "./channel-breaker.ts";
import { orderChannels } from "./order-channels.ts";
import { withFailover, type Served } from "./with-failover.ts";
import { Deadline } from "./deadline.ts";

/** A served call whose deadline is still running: `release` it once its body has been read. */
export interface ServedCall<T> extends Served<T> {
  release(): void;
  /** Aborted when the deadline passes or the client leaves, until `release`. */
  deadline: AbortSignal;
}

/** What calling upstreams needs, shared by every endpoint's dispatcher. */
export interface UpstreamDeps {
  channels: ChannelRegistry;
  breaker: ChannelBreaker;
  fetch: typeof fetch;
  now: () => number;
  upstreamTimeoutMs: number;
  firstByteTimeoutMs: number;
  wholeAnswerTimeoutMs: number;
  streamIdleTimeoutMs: number;
  maxUpstreamBodyBytes: number;
}

/**
 * How an answer is read: whole, as a stream, or as a stream that an upstream may answer whole
 * instead (whisper-1 ignores a transcription's `stream`), which is then read as a whole answer is.
 */
export type AnswerReading = "whole" | "stream" | "stream-or-whole";

/**
 * Runs `attempt` on the channels serving `model` whose kind `canServe` this endpoint, in
 * routing order with failover, under one overall deadline that also covers reading the
 * body (a stream). 503 when no channel can. For an answer read whole, not streamed, a client
 * that leaves once an upstream's 2xx head is in no longer stops the body's read: the upstream
 * has done the work and bills it, so it is read, within the deadline and idle limit, to learn
 * what to charge; so is a stream's answer that came whole (UpstreamCall.answeredWhole). Such an
 * answer's headers come only once it is whole, so its wait for them is the whole-answer limit,
 * not the first-byte one (a stream's cannot know it in advance).
 */
export async function serveThroughChannels<T>(
  deps: UpstreamDeps,
  model: string,
  canServe: (channel: Channel) => boolean,
  signal: AbortSignal,
  attempt: (channel: Channel, call: UpstreamCall) => Promise<T>,
  reading: AnswerReading = "stream",
): Promise<ServedCall<T>> {
  const candidates = deps.channels.candidatesFor(model).filter(canServe);
  if (candidates.length === 0) throw new GatewayError(503, `No channel can serve the model '${model}' right now`);
  const deadline = new Deadline(signal, deps.upstreamTimeoutMs);
  const readWhole = reading === "whole";
  const outliveClient = reading === "stream" ? undefined : () => deadline.outliveClient();
  const attemptOn = async (channel: Channel, calledAgain: () => void) => {
    const warnings = new UpstreamWarnings();
    try {
      const value = await attempt(channel, {
        channel,
        upstreamModel: upstreamModelOf(channel, model),
        signal: deadline.signal,
        fetch: deps.fetch,
        now: deps.now,
        firstByteTimeoutMs: readWhole ? deps.wholeAnswerTimeoutMs : deps.firstByteTimeoutMs,
        idleTimeoutMs: deps.streamIdleTimeoutMs,
        maxBodyBytes: deps.maxUpstreamBodyBytes,
        warnings,
        calledAgain,
        onAnswered: readWhole ? outliveClient : undefined,
        answeredWhole: readWhole ? undefined : outliveClient,
      });
      return { value, warnings: warnings.header() };
    } catch (error) {
      // A 2xx answer whose body then failed (no usable answer, a body cut off) may have
      // outlived the client: the next channel's try must not, or a caller gone before its
      // head would be charged for an answer it never got.
      deadline.followClient();
      throw error;
    }
  };
  try {
    const served = await withFailover(orderChannels(candidates), attemptOn, { signal: deadline.signal, clientSignal: signal, breaker: deps.breaker });
    return { ...served, value: served.value.value, warnings: served.value.warnings, release: () => deadline.clear(), deadline: deadline.signal };
  } catch (error) {
    deadline.clear();
    throw error;
  }
}

/** The status a failed request's usage row records. */
export function statusOf(error: unknown): number {
  return error instanceof GatewayError ? error.status : 500;
}
