import type { Channel } from "../channels/channel.ts";
import type { SpeechResult } from "../canonical/media.ts";
import type { BillableUsage } from "../billing/compute-cost.ts";
import type { Logger } from "../lib/logger.ts";
import { tapStream } from "../streams/tap-stream.ts";
import type { MediaAdapter, MediaCapability, UpstreamCall } from "../upstreams/adapter.ts";
import { MEDIA_ADAPTERS } from "../upstreams/media-adapters.ts";
import { afterFirstChunk } from "../upstreams/read-body.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";
import type { RequestMeter } from "../usage/request-meter.ts";
import { serveThroughChannels, statusOf, type ServedCall, type UpstreamDeps } from "./serve-through-channels.ts";
import type { Served } from "./with-failover.ts";

/** An adapter known to have capability C (channels without it are never tried). */
type Capable<C extends MediaCapability> = Required<Pick<MediaAdapter, C>>;

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
    const served = await this.#serve(model, capability, meter, signal, run, true);
    served.release();
    await meter.finish({ status: signal.aborted ? 499 : 200, usage: usageOf(served.value), channelId: served.channel.id });
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
        return meter.finish({
          status: end === "complete" ? 200 : end === "cancelled" ? 499 : 502,
          // The upstream was asked for all of it and bills all of it, also when the client
          // stops listening halfway, by hanging up or by reading no more until the deadline
          // cuts it off ("stalled"). A body the upstream broke off is of no use to the
          // caller, so that one is not charged.
          usage: end === "failed" ? null : usage,
          channelId: served.channel.id,
        });
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
    readWhole = false,
  ): Promise<ServedCall<T>> {
    const capable = (channel: Channel) => MEDIA_ADAPTERS[channel.type]?.[capability] !== undefined;
    try {
      return await serveThroughChannels(this.deps, model, capable, signal, (channel, call) => run(MEDIA_ADAPTERS[channel.type] as Capable<C>, call), readWhole);
    } catch (error) {
      await meter.finish({ status: statusOf(error), usage: null, channelId: null });
      throw error;
    }
  }
}
