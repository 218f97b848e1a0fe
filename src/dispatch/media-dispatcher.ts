import type { Channel } from "../channels/channel.ts";
import type { SpeechResult } from "../canonical/media.ts";
import type { BillableUsage } from "../billing/compute-cost.ts";
import type { Logger } from "../lib/logger.ts";
import type { StreamFailure, StreamPart } from "../canonical/chat.ts";
import { UnrecordedEnding } from "../streams/unrecorded-ending.ts";
import { streamEndStatus } from "../translate/stream-failure-status.ts";
import { holdUntilAnswer } from "../streams/hold-until-answer.ts";
import { superviseUpstream } from "../streams/supervise-upstream.ts";
import { tapBatches, tapStream, type StreamEnd } from "../streams/tap-stream.ts";
import type { NativePart } from "../translate/relay-native.ts";
import type { EventsAnswer, MediaAdapter, MediaCapability, UpstreamCall } from "../upstreams/adapter.ts";
import { MEDIA_ADAPTERS } from "../upstreams/media-adapters.ts";
import { afterFirstChunk } from "../upstreams/read-body.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";
import type { RequestMeter } from "../usage/request-meter.ts";
import { serveThroughChannels, statusOf, type AnswerReading, type ServedCall, type UpstreamDeps } from "./serve-through-channels.ts";
import type { Served } from "./with-failover.ts";

/** An adapter known to have capability C (channels without it are never tried). */
type Capable<C extends MediaCapability> = Required<Pick<MediaAdapter, C>>;

/**
 * How a streamed media answer is charged. Its units are known before the call, as for its
 * whole form; `usage` says what a stream that ended as `end` costs ("failed" too when the
 * upstream broke it with an error event), once `see` has seen each event that came.
 */
export interface StreamBilling<W = never> {
  see?(event: NativePart): void;
  usage(end: StreamEnd): BillableUsage | null;
  /** What the whole answer of an upstream that ignored `stream` costs, for a request whose upstream may give one. */
  whole?(answer: W): BillableUsage;
}

/**
 * Speech or a transcript: charged for the whole request, which the upstream was asked for and
 * bills, however it ended, but for a stream the upstream broke off, which leaves the caller
 * nothing of use; a whole answer too.
 */
export function chargedUnlessBroken<W = never>(usage: BillableUsage): StreamBilling<W> {
  return { usage: (end) => (end === "failed" ? null : usage), whole: () => usage };
}

const isEvents = (answer: unknown): answer is EventsAnswer => (answer as { kind?: unknown }).kind === "events";
const isEvent = (part: StreamPart) => part.type === "native";

/**
 * Serves the non-chat endpoints through the channels of their model, with failover, and
 * writes each request's usage row (with its settlement) exactly once.
 */
export class MediaDispatcher {
  constructor(
    private readonly deps: UpstreamDeps,
    private readonly log: Logger,
    /** See GatewayDeps.bodyErrorReason. */
    private readonly bodyErrorReason?: (error: unknown) => unknown,
  ) {}

  /**
   * Calls `capability` on the first channel that answers; `usageOf` says what the answer
   * used. The usage row is committed before this resolves. A client that leaves once the
   * upstream's answer has begun is charged for it (a 499 row): see serveThroughChannels.
   */
  async call<C extends MediaCapability, T>(
    model: string,
    capability: C,
    meter: RequestMeter,
    signal: AbortSignal,
    run: (adapter: Capable<C>, call: UpstreamCall) => Promise<T>,
    usageOf: (result: T) => BillableUsage,
  ): Promise<Served<T>> {
    const served = await this.#serve(model, capability, meter, signal, run, "whole");
    return this.#settleWhole(served, meter, signal, usageOf(served.value));
  }

  /**
   * Like `call` for an answer streamed as events (see MediaStreamEnd): the caller is answered
   * once the first event has come (a failure before it tries the next channel, as one before
   * the head does), and the usage row is written when the stream ends, fails or the client
   * cancels it, as `billing` says. A stream that breaks or stalls after the first event ends
   * with an error part. An upstream that ignored `stream` and answered whole (`run` gave no
   * events) is settled at once, as by `call`.
   */
  async streamEvents<C extends MediaCapability, W = never>(
    model: string,
    capability: C,
    meter: RequestMeter,
    signal: AbortSignal,
    run: (adapter: Capable<C>, call: UpstreamCall) => Promise<EventsAnswer | W>,
    billing: StreamBilling<W>,
  ): Promise<Served<EventsAnswer | W>> {
    const served = await this.#serve(model, capability, meter, signal, async (adapter, call) => {
      const answer = await run(adapter, call);
      if (!isEvents(answer)) return answer;
      return { kind: "events" as const, events: await holdUntilAnswer(superviseUpstream(answer.events, call.idleTimeoutMs, call.channel.apiKey), Infinity, isEvent) };
    }, "stream-or-whole");
    // Only a request whose upstream may answer whole gets a whole answer, and its billing says what that costs.
    if (!isEvents(served.value)) return this.#settleWhole({ ...served, value: served.value }, meter, signal, billing.whole!(served.value), false);
    let failure: StreamFailure | undefined;
    const ending = new UnrecordedEnding();
    const events = tapBatches(served.value.events, {
      deadline: { signal: served.deadline, client: signal },
      onItem(part) {
        if (part.type === "native") billing.see?.(part);
        else if (part.type === "error") failure = part;
      },
      onEnd: (end) => {
        served.release();
        // A stream the upstream broke is charged as a failed one, even when the client hung up after its error event.
        return ending.noting(meter.finish({ status: streamEndStatus(end, failure), usage: billing.usage(failure ? "failed" : end), channelId: served.channel.id }), end === "complete" && !failure);
      },
    });
    return { ...served, value: { kind: "events", events: ending.around(events) } };
  }

  /**
   * Settles an answer read whole: its usage row is committed before this resolves, a 499 when
   * the client left once it had begun. `streamed` is false for a stream answered whole.
   */
  async #settleWhole<T>(served: ServedCall<T>, meter: RequestMeter, signal: AbortSignal, usage: BillableUsage, streamed?: boolean): Promise<Served<T>> {
    served.release();
    await meter.finish({ status: signal.aborted ? 499 : 200, usage, channelId: served.channel.id, streamed });
    return served;
  }

  /**
   * Like `call` for a streamed body (speech): the usage row is written when the body ends,
   * fails, or the client cancels it. `usage` is known up front, since the request fixes it.
   * The caller is answered once the first chunk has come (a head followed by silence is a
   * 504, or the next channel); after it, a read that waits past the stream idle timeout or
   * breaks ends the body cut short, and frees the upstream.
   */
  async stream<C extends MediaCapability>(
    model: string,
    capability: C,
    meter: RequestMeter,
    signal: AbortSignal,
    run: (adapter: Capable<C>, call: UpstreamCall) => Promise<SpeechResult>,
    usage: BillableUsage,
  ): Promise<Served<SpeechResult>> {
    const served = await this.#serve(model, capability, meter, signal, async (adapter, call) => {
      const { body, contentType } = await run(adapter, call);
      return { contentType, reader: await afterFirstChunk(body, call.idleTimeoutMs, "audio") };
    });
    const body = tapStream(served.value.reader, {
      errorReason: this.bodyErrorReason,
      deadline: { signal: served.deadline, client: signal },
      onEnd: (end, error) => {
        served.release();
        if (end === "failed") {
          const reason = error instanceof UpstreamError ? error.message : "the upstream's body failed";
          this.log.warn("upstream body failed mid-stream", { request_id: meter.facts.requestId, channel_id: served.channel.id, reason });
        }
        // The upstream was asked for all of it and bills all of it, also when the client
        // stops listening halfway, by hanging up or by reading no more until the deadline
        // cuts it off ("stalled"). A body the upstream broke off is of no use to the caller,
        // so that one is not charged.
        return meter.finish({ status: streamEndStatus(end), usage: chargedUnlessBroken(usage).usage(end), channelId: served.channel.id });
      },
    });
    return { ...served, value: { body, contentType: served.value.contentType } };
  }

  async #serve<C extends MediaCapability, T>(
    model: string,
    capability: C,
    meter: RequestMeter,
    signal: AbortSignal,
    run: (adapter: Capable<C>, call: UpstreamCall) => Promise<T>,
    reading: AnswerReading = "stream",
  ): Promise<ServedCall<T>> {
    const capable = (channel: Channel) => MEDIA_ADAPTERS[channel.type]?.[capability] !== undefined;
    try {
      return await serveThroughChannels(this.deps, model, capable, signal, (channel, call) => run(MEDIA_ADAPTERS[channel.type] as Capable<C>, call), reading);
    } catch (error) {
      await meter.finish({ status: statusOf(error), usage: null, channelId: null });
      throw error;
    }
  }
}
