import type { ChatRequest, ChatResponse, StreamPart } from "../canonical/chat.ts";
import type { Channel } from "../channels/channel.ts";
import type { UpstreamWarnings } from "./warnings.ts";

/** What an adapter needs for one call besides the request. */
export interface UpstreamCall {
  channel: Channel;
  /** The model ID to send upstream (after the channel's model_map). */
  upstreamModel: string;
  /** Aborted when the caller goes away or the deadline passes. */
  signal: AbortSignal;
  fetch: typeof fetch;
  now: () => number;
  /** Longest wait for the upstream's response headers. */
  firstByteTimeoutMs: number;
  /** Where translators note parameters the upstream cannot honour. */
  warnings: UpstreamWarnings;
}

/**
 * One upstream kind. Both methods reject with UpstreamError before any output exists, so
 * the dispatcher can fail over; `stream` resolves once the upstream has accepted the
 * request, and later failures arrive as an `error` part.
 */
export interface ChatAdapter {
  complete(request: ChatRequest, call: UpstreamCall): Promise<ChatResponse>;
  stream(request: ChatRequest, call: UpstreamCall): Promise<ReadableStream<StreamPart>>;
}
