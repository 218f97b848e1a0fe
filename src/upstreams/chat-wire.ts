import * as v from "valibot";
import type { ChatRequest, ChatResponse, StreamPart, WireFormat } from "../canonical/chat.ts";
import { readSseBody, type SseEvent } from "../streams/sse.ts";
import { chainSteps, type StreamStep } from "../streams/stream-step.ts";
import { boundHeldParts } from "../streams/bound-held-parts.ts";
import type { NativePart } from "../translate/relay-native.ts";
import type { ChatStream, TokenCount, UpstreamCall } from "./adapter.ts";
import { readJson } from "./read-body.ts";
import { UpstreamError } from "./upstream-error.ts";
import { eventStreamBody } from "./content-type.ts";

/** How an upstream kind's chat answers read: the same three pieces for every HTTP kind. */
export interface ChatWire<S extends v.GenericSchema> {
  format: WireFormat;
  /** A lenient schema of the response fields the translation uses. */
  responseSchema: S;
  toCanonical(response: v.InferOutput<S>, now: number): ChatResponse;
  /**
   * Whether a whole response holds an answer (or says why there is none), where the schema
   * alone cannot tell: an empty list of choices is no answer, and must not bill as one.
   */
  hasAnswer?(response: v.InferOutput<S>): boolean;
  /**
   * Why a whole response, though an answer, gives a caller of another format nothing to use
   * (see UpstreamFailure's `unusable`); undefined when it does. A caller of the upstream's own
   * format gets it as sent, as it would from the provider.
   */
  unusableWhenTranslated?(response: v.InferOutput<S>): string | undefined;
  /**
   * For one stream of `answers` answers, whether a native event finishes the last of them
   * while the stream may go on (Gemini's, which has no end event): a passthrough relay holds
   * it and what follows until the body ends.
   */
  finishesAnswers?(answers: number): (part: NativePart) => boolean;
  /**
   * The stream decoder for `answers` answers (more than one only with `native`); with
   * `native`, it also gives each event as a native part.
   */
  decodeStream(now: () => number, native: boolean, answers: number): StreamStep<SseEvent, StreamPart>;
}

/** A 2xx chat response in canonical form, with the upstream's own body when the caller speaks its format. */
export async function readChatResponse<S extends v.GenericSchema>(
  response: Response,
  wire: ChatWire<S>,
  request: ChatRequest,
  call: UpstreamCall,
): Promise<ChatResponse> {
  const json = await readJson(response, call);
  const parsed = v.safeParse(wire.responseSchema, json);
  if (!parsed.success) throw new UpstreamError("protocol", "upstream sent a chat response of an unexpected shape");
  if (wire.hasAnswer?.(parsed.output) === false) throw new UpstreamError("protocol", "upstream sent a chat response without an answer");
  if (request.native?.format === wire.format) return { ...wire.toCanonical(parsed.output, call.now()), native: json as Record<string, unknown> };
  const unusable = wire.unusableWhenTranslated?.(parsed.output);
  if (unusable) throw new UpstreamError("unusable", unusable);
  return wire.toCanonical(parsed.output, call.now());
}

/**
 * A 2xx streamed chat response as canonical parts, native ones included when the caller
 * speaks its format; one that is no event stream fails first (see eventStreamBody).
 */
export function readChatStream<S extends v.GenericSchema>(response: Response, wire: ChatWire<S>, request: ChatRequest, call: UpstreamCall): ChatStream {
  const body = eventStreamBody(response);
  const native = request.native?.format === wire.format;
  const answers = request.native?.answers ?? 1;
  const decode = chainSteps(wire.decodeStream(call.now, native, answers), boundHeldParts(call.maxBodyBytes, wire.finishesAnswers?.(answers)));
  return { parts: readSseBody(body, decode, call.signal, call.maxBodyBytes), native };
}

/**
 * A count an upstream of `format` gave in `body` (its answer, read by a loose schema, so whole):
 * the body comes along for a caller of that format, whose SDK reads what it says beside the
 * count (Gemini's cachedContentTokenCount and tokens by modality, Anthropic's context_management).
 */
export function tokenCountOf(inputTokens: number, body: Record<string, unknown>, format: WireFormat, request: ChatRequest): TokenCount {
  return request.native?.format === format ? { inputTokens, native: body } : { inputTokens };
}
