import * as v from "valibot";
import { promptOf, type FinishReason, type PromptUsage, type StreamFailure, type StreamPart, type Usage } from "../../canonical/chat.ts";
import type { ErrorStatus } from "../../errors/gateway-error.ts";
import { streamFailureStatus } from "../stream-failure-status.ts";
import type { SseEvent } from "../../streams/sse.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import type { StepOutput, StreamStep } from "../../streams/stream-step.ts";
import { parseStreamEvent, providerErrorPart, unusableEventPart } from "../parse-stream-event.ts";
import { endAtError } from "../end-at-error.ts";
import { anthropicStopOf, mapAnthropicStopReason } from "./map-stop-reason.ts";
import { AnthropicContentBlockSchema, AnthropicUsageSchema, anthropicMessageId, isThinkingBlock, RefusalDetailsSchema, sendableThinking, thinkingBlock, usageFromAnthropic, usageToAnthropic, type ThinkingBlock } from "./convert-response.ts";
import { believableUsage } from "../../lib/schemas.ts";
import { jsonOrUndefined } from "../../lib/parse-json.ts";

const EventSchema = v.looseObject({
  type: v.string(),
  index: v.optional(v.number()),
  message: v.optional(v.looseObject({ id: v.optional(v.string()), model: v.optional(v.string()), usage: believableUsage(AnthropicUsageSchema) })),
  content_block: v.optional(AnthropicContentBlockSchema),
  delta: v.optional(
    v.looseObject({
      type: v.optional(v.string()),
      text: v.optional(v.string()),
      thinking: v.optional(v.string()),
      signature: v.optional(v.string()),
      partial_json: v.optional(v.string()),
      stop_reason: v.optional(v.nullable(v.string())),
      stop_details: v.optional(v.nullable(RefusalDetailsSchema)),
    }),
  ),
  usage: believableUsage(AnthropicUsageSchema),
  error: v.optional(v.looseObject({ message: v.optional(v.string()) })),
});

/**
 * Upstream Anthropic stream events -> canonical parts. Usage is assembled from message_start
 * (input, also given as the start part's prompt) and message_delta (output) and emitted with
 * message_delta, only when both halves came and were believable: one read as 0 made the
 * prompt or the answer free, where an unreported usage is estimated. A stream that ends
 * before message_stop was cut short and ends with an error part. With `native`, each event
 * is also given as it came (a native part), for a relay to an Anthropic caller; otherwise the
 * thinking blocks are also given whole at message_stop (signed-thinking parts), all of them or
 * none (see sendableThinking), to be kept for the caller's next turn.
 */
export function decodeAnthropicEvents(now: () => number, native = false): StreamStep<SseEvent, StreamPart> {
  let usage: v.InferOutput<typeof AnthropicUsageSchema> = {};
  let inputReported = false;
  let outputReported = false;
  let finish: FinishReason = "stop";
  let stopped = false;
  let toolIndex = -1;
  const toolIndexOfBlock = new Map<number, number>();
  // Thinking blocks still open, by index, assembled from their deltas, and those closed. Not for
  // a relay: its Anthropic caller has them in the events themselves.
  const thinkingOfBlock = native ? undefined : new Map<number, ThinkingBlock>();
  const closedThinking: ThinkingBlock[] = [];
  // What would go back is not what Anthropic made: a thinking or signature delta found no open
  // thinking block, or thinking came after a tool call.
  let thinkingLost = false;
  return {
    transform(sse, controller) {
      if (stopped) return;
      const parsed = parseStreamEvent(EventSchema, sse.data);
      if (!parsed) {
        stopped = true;
        controller.enqueue(unusableEventPart(sse.data));
        return;
      }
      const event = parsed.value;
      if (native) controller.enqueue({ type: "native", event: sse, body: parsed.json });
      switch (event.type) {
        case "message_start":
          usage = { ...usage, ...event.message?.usage };
          inputReported = event.message?.usage?.input_tokens != null;
          controller.enqueue({
            type: "start",
            id: event.message?.id ?? "",
            model: event.message?.model ?? "",
            created: Math.floor(now() / 1000),
            prompt: inputReported ? promptOf(usageFromAnthropic(usage)) : undefined,
          });
          break;
        case "content_block_start":
          if (event.content_block && isThinkingBlock(event.content_block)) {
            thinkingOfBlock?.set(event.index ?? 0, { ...event.content_block });
            // Thinking between tool calls (interleaved) would go back before the first call, moved: none is kept.
            if (toolIndex >= 0) thinkingLost = true;
          }
          if (event.content_block?.type === "tool_use") {
            toolIndex++;
            toolIndexOfBlock.set(event.index ?? 0, toolIndex);
            controller.enqueue({ type: "tool-call-start", index: toolIndex, id: event.content_block.id ?? "", name: event.content_block.name ?? "" });
          } else if (event.content_block?.type === "server_tool_use" && event.content_block.name === "web_search") {
            controller.enqueue({ type: "web-search" });
          } else if (event.content_block?.type === "thinking" && event.content_block.thinking) {
            controller.enqueue({ type: "reasoning-delta", text: event.content_block.thinking });
          } else if (event.content_block?.text) {
            controller.enqueue({ type: "text-delta", text: event.content_block.text });
          }
          break;
        case "content_block_delta":
          if (event.delta?.type === "text_delta" && event.delta.text) controller.enqueue({ type: "text-delta", text: event.delta.text });
          else if (event.delta?.type === "thinking_delta" && event.delta.thinking) {
            const block = thinkingOfBlock?.get(event.index ?? 0);
            if (block) block.thinking = (block.thinking ?? "") + event.delta.thinking;
            else thinkingLost = true;
            controller.enqueue({ type: "reasoning-delta", text: event.delta.thinking });
          } else if (event.delta?.type === "signature_delta" && event.delta.signature) {
            const block = thinkingOfBlock?.get(event.index ?? 0);
            if (block) block.signature = (block.signature ?? "") + event.delta.signature;
            else thinkingLost = true;
          } else if (event.delta?.type === "input_json_delta" && event.delta.partial_json) {
            const index = toolIndexOfBlock.get(event.index ?? 0) ?? 0;
            controller.enqueue({ type: "tool-call-delta", index, argumentsDelta: event.delta.partial_json });
          }
          break;
        case "content_block_stop": {
          const block = thinkingOfBlock?.get(event.index ?? 0);
          if (block) closedThinking.push(block);
          thinkingOfBlock?.delete(event.index ?? 0);
          break;
        }
        case "message_delta":
          if (event.delta?.stop_reason) finish = mapAnthropicStopReason(event.delta.stop_reason);
          if (event.delta?.stop_details?.explanation) controller.enqueue({ type: "refusal-delta", text: event.delta.stop_details.explanation });
          if (event.usage) usage = { ...usage, ...stripNulls(event.usage) };
          if (event.usage?.output_tokens != null) outputReported = true;
          // The count is final here; message_stop adds nothing to it, and a client that
          // leaves before message_stop is billed by it.
          if (inputReported && outputReported) controller.enqueue({ type: "usage", usage: usageFromAnthropic(usage) });
          break;
        case "message_stop": {
          stopped = true;
          // Wanted back only with the answer's tool calls; a block still open, or a delta that
          // found none, came incomplete: then none goes back.
          const signed = thinkingLost || thinkingOfBlock?.size || toolIndex < 0 ? undefined : sendableThinking(closedThinking);
          if (signed) for (const block of signed) controller.enqueue({ type: "signed-thinking", block });
          controller.enqueue({ type: "finish", finishReason: finish });
          break;
        }
        case "error":
          stopped = true;
          controller.enqueue(providerErrorPart(event.error?.message ?? "upstream reported an error mid-stream", event.error));
          break;
      }
    },
    flush(controller) {
      if (!stopped) controller.enqueue({ type: "error", message: "upstream stream ended before the response was complete" });
    },
    ended: () => stopped,
  };
}

function stripNulls<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

/**
 * Canonical parts -> the Anthropic event sequence: message_start, content_block_start /
 * delta / stop per block, message_delta with stop_reason and usage, message_stop. An error
 * part becomes an `error` event and ends the stream.
 *
 * message_start counts the prompt as the upstream did when it counts up front (Anthropic,
 * Gemini), else as `estimatedPromptTokens` (an OpenAI upstream counts at the end, the mock's
 * count is the estimate): LangChain's ChatAnthropic reads the prompt's tokens there alone, and
 * took a stream's prompt for free. message_delta gives the upstream's final count.
 *
 * Anthropic streams one block at a time, but an OpenAI-format upstream may interleave the
 * fragments of parallel tool calls. The open tool block streams live; a call that starts
 * while the open call's arguments are not yet whole JSON waits, its fragments gathered, and
 * is written as its own block once the open one is whole (or the answer moves on). In the
 * usual order, one call after another, nothing waits.
 */
export function renderAnthropicEvents(model: string, fallbackId: string, estimatedPromptTokens: number): StreamStep<StreamPart, string> {
  let openBlock: { index: number; kind: "text" | "thinking" | "tool"; toolIndex?: number } | null = null;
  /** The arguments the open tool block has streamed so far. */
  let openArguments = "";
  const waitingCalls = new Map<number, { id: string; name: string; arguments: string }>();
  /** Block index of each tool call already written, for fragments that come after its block closed. */
  const blockOfCall = new Map<number, number>();
  let nextBlock = 0;
  let usage: Usage | null = null;
  let finish: FinishReason = "stop";
  let stopSequence: string | undefined;
  let started = false;
  const emit = (controller: StepOutput<string>, type: string, data: object) => controller.enqueue(anthropicEvent(type, data));
  const start = (controller: StepOutput<string>, id: string, prompt: PromptUsage = { inputTokens: estimatedPromptTokens }) => {
    if (started) return;
    started = true;
    emit(controller, "message_start", {
      message: {
        id: anthropicMessageId(id || fallbackId),
        type: "message",
        role: "assistant",
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: usageToAnthropic({ ...prompt, outputTokens: 0 }),
      },
    });
  };
  const closeBlock = (controller: StepOutput<string>) => {
    if (openBlock) emit(controller, "content_block_stop", { index: openBlock.index });
    openBlock = null;
  };
  const argumentsDelta = (controller: StepOutput<string>, index: number, partialJson: string) =>
    emit(controller, "content_block_delta", { index, delta: { type: "input_json_delta", partial_json: partialJson } });
  const openToolBlock = (controller: StepOutput<string>, toolIndex: number, id: string, name: string, gathered = "") => {
    closeBlock(controller);
    openBlock = { index: nextBlock++, kind: "tool", toolIndex };
    openArguments = gathered;
    blockOfCall.set(toolIndex, openBlock.index);
    emit(controller, "content_block_start", { index: openBlock.index, content_block: { type: "tool_use", id, name, input: {} } });
    if (gathered) argumentsDelta(controller, openBlock.index, gathered);
  };
  /** The open block, when of `kind`, else a new one of it (`block` as content_block_start shows it), after the open one and the waiting calls. */
  const blockOf = (controller: StepOutput<string>, kind: "text" | "thinking", block: object) => {
    if (openBlock?.kind === kind) return openBlock;
    releaseWaitingCalls(controller, true);
    closeBlock(controller);
    openBlock = { index: nextBlock++, kind };
    emit(controller, "content_block_start", { index: openBlock.index, content_block: block });
    return openBlock;
  };
  /** Writes the waiting calls in order; with `all` false, stops at one whose arguments are still incomplete, leaving it open. */
  const releaseWaitingCalls = (controller: StepOutput<string>, all: boolean) => {
    for (const [toolIndex, call] of waitingCalls) {
      waitingCalls.delete(toolIndex);
      openToolBlock(controller, toolIndex, call.id, call.name, call.arguments);
      if (!all && !isWholeJson(call.arguments)) return;
    }
  };
  return endAtError(anthropicErrorEvent, {
    transform(part, controller) {
      if (part.type === "native") return;
      if (part.type !== "start") start(controller, "");
      switch (part.type) {
        case "start":
          start(controller, part.id, part.prompt);
          break;
        // Anthropic has no place for a refusal's words but the answer's text.
        case "text-delta":
        case "refusal-delta": {
          const block = blockOf(controller, "text", { type: "text", text: "" });
          emit(controller, "content_block_delta", { index: block.index, delta: { type: "text_delta", text: part.text } });
          break;
        }
        case "reasoning-delta": {
          const block = blockOf(controller, "thinking", thinkingBlock(""));
          emit(controller, "content_block_delta", { index: block.index, delta: { type: "thinking_delta", thinking: part.text } });
          break;
        }
        case "tool-call-start":
          if (openBlock?.kind === "tool" && !isWholeJson(openArguments)) waitingCalls.set(part.index, { id: part.id, name: part.name, arguments: "" });
          else openToolBlock(controller, part.index, part.id, part.name);
          break;
        case "tool-call-delta": {
          const waiting = waitingCalls.get(part.index);
          if (waiting) waiting.arguments += part.argumentsDelta;
          else if (openBlock?.kind === "tool" && openBlock.toolIndex === part.index) {
            argumentsDelta(controller, openBlock.index, part.argumentsDelta);
            openArguments += part.argumentsDelta;
            if (waitingCalls.size > 0 && isWholeJson(openArguments)) releaseWaitingCalls(controller, false);
          } else {
            // A fragment of a call whose block already closed: sent under that block's index,
            // where the SDKs' accumulators (which key blocks by index) put it.
            const block = blockOfCall.get(part.index);
            if (block !== undefined) argumentsDelta(controller, block, part.argumentsDelta);
          }
          break;
        }
        case "usage":
          usage = part.usage;
          break;
        case "finish":
          finish = part.finishReason;
          stopSequence = part.stopSequence;
          break;
      }
    },
    flush(controller) {
      start(controller, "");
      releaseWaitingCalls(controller, true);
      closeBlock(controller);
      const final = usageToAnthropic(usage ?? { inputTokens: 0, outputTokens: 0 });
      emit(controller, "message_delta", { delta: anthropicStopOf(finish, stopSequence), usage: final });
      emit(controller, "message_stop", {});
    },
  });
}

/** Whether streamed tool arguments so far form a whole JSON value (parsed only when they end in a closing bracket). */
function isWholeJson(text: string): boolean {
  let last = text.length - 1;
  while (last >= 0 && " \t\n\r".includes(text[last]!)) last--;
  return (text[last] === "}" || text[last] === "]") && jsonOrUndefined(text) !== undefined;
}

/** One Anthropic event: named by its type, which its data repeats. */
function anthropicEvent(type: string, data: object): string {
  return formatSseEvent(JSON.stringify({ type, ...data }), type);
}

/** Anthropic's error type for each status a failure after the stream began can stand for. */
const ANTHROPIC_FAILURE_TYPES: Partial<Record<ErrorStatus, string>> = { 429: "rate_limit_error", 503: "overloaded_error", 504: "timeout_error" };

/** How an Anthropic stream that already began reports a failure, typed as Anthropic types it. */
export function anthropicErrorEvent(failure: StreamFailure): string {
  const type = ANTHROPIC_FAILURE_TYPES[streamFailureStatus(failure)] ?? "api_error";
  return anthropicEvent("error", { error: { type, message: failure.message } });
}
