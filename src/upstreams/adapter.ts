import type { ChatRequest, ChatResponse, StreamPart, WireFormat } from "../canonical/chat.ts";
import type { BatchSource } from "../streams/batch-source.ts";
import type { Channel } from "../channels/channel.ts";
import type { UpstreamWarnings } from "./warnings.ts";
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ImageResult,
  RerankRequest,
  RerankResult,
  SpeechRequest,
  SpeechResult,
  TranscriptionRequest,
  TranscriptionResult,
} from "../canonical/media.ts";

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
  /** The stream idle timeout: the longest wait for the next piece of a streamed body, and for the whole of a body read whole. */
  idleTimeoutMs: number;
  /** The largest body read whole, and the largest single event of a stream (GATEWAY_MAX_UPSTREAM_BODY_BYTES). */
  maxBodyBytes: number;
  /** Where translators note parameters the upstream cannot honour. */
  warnings: UpstreamWarnings;
  /**
   * Counts one more call to the upstream within this attempt: the same request sent again,
   * changed, on the same channel (not a failover), so that x-gateway-attempts counts each call.
   */
  calledAgain?: () => void;
  /** Called when the upstream's 2xx head is in, before its body is read. */
  onAnswered?: () => void;
  /**
   * Called by an adapter whose streamed request was answered whole, before it reads that body:
   * as for an answer read whole, a client that leaves no longer stops the read, since the
   * upstream has done the work and bills it.
   */
  answeredWhole?: () => void;
}

/** A streamed chat answer: canonical parts, batched as the upstream delivered them. */
export interface ChatStream {
  parts: BatchSource<StreamPart>;
  /** The upstream speaks the caller's format: its events come as native parts, to be relayed as they are. */
  native: boolean;
}

/** The input tokens of a prompt, as an upstream counted them. */
export interface TokenCount {
  inputTokens: number;
  /** The upstream's own answer, given only when the caller speaks its format, so what it says beside the count passes through. */
  native?: Record<string, unknown>;
}

/**
 * One upstream kind. Both methods reject with UpstreamError before any output exists, so
 * the dispatcher can fail over; `stream` resolves once the upstream has accepted the
 * request, and later failures arrive as an `error` part. When the caller speaks the
 * upstream's format, the upstream's own body (or events) come along for native passthrough.
 */
export interface ChatAdapter {
  /** The wire format it speaks: a caller of the same format is passed through. The mock has none. */
  format?: WireFormat;
  /**
   * Whether it sends an answered tool-calling turn with the thinking the gateway kept of it
   * (ChatMessage.signedThinking): the dispatcher looks for kept thinking only for such a kind.
   */
  takesKeptThinking?: boolean;
  complete(request: ChatRequest, call: UpstreamCall): Promise<ChatResponse>;
  stream(request: ChatRequest, call: UpstreamCall): Promise<ChatStream>;
  /**
   * The input tokens of the request's prompt, counted as the upstream counts them; a kind
   * whose API cannot count gives the gateway's estimate and says so in the warnings.
   */
  countTokens(request: ChatRequest, call: UpstreamCall): Promise<TokenCount>;
}

/**
 * A streamed media answer: its events as native parts (see MediaStreamEnd), a failure as an
 * error part, one batch per delivery.
 */
export type MediaEvents = BatchSource<StreamPart>;

/** A streamed answer as an adapter gives it: its events. */
export interface EventsAnswer {
  kind: "events";
  events: MediaEvents;
}

/**
 * The non-chat endpoints of one upstream kind; a kind leaves out what its API lacks. Like
 * chat, each rejects with UpstreamError before any output exists, so failover can move on;
 * a stream of events resolves once the upstream has accepted the request.
 */
export interface MediaAdapter {
  embed?(request: EmbeddingRequest, call: UpstreamCall): Promise<EmbeddingResult>;
  rerank?(request: RerankRequest, call: UpstreamCall): Promise<RerankResult>;
  generateImages?(request: ImageRequest, call: UpstreamCall): Promise<ImageResult>;
  /** The images as OpenAI's image_generation.partial_image events and one image_generation.completed each (`stream: true`). */
  streamImages?(request: ImageRequest, call: UpstreamCall): Promise<EventsAnswer>;
  /** Resolves once the upstream accepted the request; the audio then streams. */
  speak?(request: SpeechRequest, call: UpstreamCall): Promise<SpeechResult>;
  /** The speech as OpenAI's speech.audio.delta events, then speech.audio.done (`stream_format: "sse"`). */
  streamSpeech?(request: SpeechRequest, call: UpstreamCall): Promise<EventsAnswer>;
  transcribe?(request: TranscriptionRequest, call: UpstreamCall): Promise<TranscriptionResult>;
  /**
   * The transcript as OpenAI's transcript.text.* events (`stream=true`), or the whole transcript
   * of an upstream that ignores `stream`, as OpenAI's whisper-1 does.
   */
  streamTranscript?(request: TranscriptionRequest, call: UpstreamCall): Promise<EventsAnswer | TranscriptionResult>;
}

/** One capability of MediaAdapter, named as its method. */
export type MediaCapability = keyof MediaAdapter;
