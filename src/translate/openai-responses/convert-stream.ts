import type { FinishReason, StreamPart, Usage } from "../../canonical/chat.ts";
import type { StepOutput, StreamStep } from "../../streams/stream-step.ts";
import { newId } from "../../lib/random-id.ts";
import { endAtError } from "../end-at-error.ts";
import { UNEXPLAINED_REFUSAL } from "../openai-chat/convert-response.ts";
import { functionCallItem, messageItem, outputText, reasoningItem, type OutputContent, type OutputItem } from "./convert-response.ts";
import { incompleteReasonOf, type ResponseHead, type ResponseObject } from "./response-object.ts";
import { responsesStreamFrame } from "./responses-stream-frame.ts";

/** The message being written: its place in `output` and whether its last content part is still open. */
interface OpenMessage {
  index: number;
  item: ReturnType<typeof messageItem>;
  partOpen: boolean;
}

/** The reasoning item being written, its one summary part open. */
interface OpenReasoning {
  index: number;
  item: ReturnType<typeof reasoningItem>;
}

/** A function call being written, by its place in `output`. */
interface OpenCall {
  index: number;
  item: ReturnType<typeof functionCallItem>;
}

/**
 * Canonical parts -> the Responses API's SSE events, each named by its type and numbered in
 * `sequence_number`: response.created and response.in_progress, then for each output item
 * its `added`, its deltas and its `done` (a message's content parts and a reasoning item's
 * summary part likewise), and last
 * response.completed, or response.incomplete when the answer was cut short, carrying the
 * whole Response with its usage. A message ends where a function call begins and the calls
 * where text begins again, so a message's events come together as OpenAI sends them; calls
 * stay open side by side, since an upstream may interleave their arguments and each event
 * names its item. An upstream failure ends the stream with an `error` event (on which the
 * SDK's stream helper rejects) and response.failed, the Response's final state. `keep` is
 * given the Response, as its last event carries it, when it completed or was cut short, not
 * when it failed.
 */
export function renderResponsesEvents(
  head: Omit<ResponseHead, "createdAt">,
  now: () => number,
  keep?: (response: ResponseObject<OutputItem>) => void,
): StreamStep<StreamPart, string> {
  const frame = responsesStreamFrame(head, now);
  const { event } = frame;
  const output: OutputItem[] = [];
  let message: OpenMessage | null = null;
  let reasoning: OpenReasoning | null = null;
  const openCalls: OpenCall[] = [];
  /** Every call by its canonical index, open or done: a late fragment still reaches its item. */
  const calls = new Map<number, OpenCall>();
  let usage: Usage | null = null;
  let finish: FinishReason = "stop";
  let refusalSaid = false;

  const partEvent = (type: string, m: OpenMessage, data: Record<string, unknown>) =>
    event(type, { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1, ...data });
  const closePart = (controller: StepOutput<string>, m: OpenMessage) => {
    if (!m.partOpen) return;
    m.partOpen = false;
    const part = m.item.content.at(-1)!;
    if (part.type === "output_text") controller.enqueue(partEvent("response.output_text.done", m, { text: part.text, logprobs: [] }));
    else controller.enqueue(partEvent("response.refusal.done", m, { refusal: part.refusal }));
    controller.enqueue(partEvent("response.content_part.done", m, { part }));
  };
  const closeMessage = (controller: StepOutput<string>, status: "completed" | "incomplete") => {
    if (!message) return;
    closePart(controller, message);
    message.item.status = status;
    controller.enqueue(event("response.output_item.done", { output_index: message.index, item: message.item }));
    message = null;
  };
  const closeCalls = (controller: StepOutput<string>, status: "completed" | "incomplete") => {
    for (const call of openCalls) {
      call.item.status = status;
      controller.enqueue(event("response.function_call_arguments.done", { item_id: call.item.id, output_index: call.index, arguments: call.item.arguments }));
      controller.enqueue(event("response.output_item.done", { output_index: call.index, item: call.item }));
    }
    openCalls.length = 0;
  };
  const summaryEvent = (type: string, r: OpenReasoning, data: Record<string, unknown>) =>
    event(type, { item_id: r.item.id, output_index: r.index, summary_index: 0, ...data });
  const closeReasoning = (controller: StepOutput<string>) => {
    if (!reasoning) return;
    const part = reasoning.item.summary[0]!;
    controller.enqueue(summaryEvent("response.reasoning_summary_text.done", reasoning, { text: part.text }));
    controller.enqueue(summaryEvent("response.reasoning_summary_part.done", reasoning, { part }));
    controller.enqueue(event("response.output_item.done", { output_index: reasoning.index, item: reasoning.item }));
    reasoning = null;
  };
  /** The open reasoning item, else a new one, after the open message and calls. */
  const reasoningFor = (controller: StepOutput<string>): OpenReasoning => {
    if (reasoning) return reasoning;
    closeMessage(controller, "completed");
    closeCalls(controller, "completed");
    const item = reasoningItem(newId("rs"), "");
    const opened: OpenReasoning = { index: output.length, item };
    output.push(item);
    controller.enqueue(event("response.output_item.added", { output_index: opened.index, item: { ...item, summary: [] } }));
    controller.enqueue(summaryEvent("response.reasoning_summary_part.added", opened, { part: item.summary[0] }));
    return (reasoning = opened);
  };
  /** The content part of `type` that the next delta goes to: the open message's last, or a new one (and a new message). */
  const partFor = (controller: StepOutput<string>, type: OutputContent["type"]): OpenMessage => {
    closeReasoning(controller);
    closeCalls(controller, "completed");
    if (!message) {
      message = { index: output.length, item: messageItem(newId("msg"), [], "in_progress"), partOpen: false };
      output.push(message.item);
      controller.enqueue(event("response.output_item.added", { output_index: message.index, item: message.item }));
    }
    if (!message.partOpen || message.item.content.at(-1)!.type !== type) {
      closePart(controller, message);
      const part: OutputContent = type === "output_text" ? outputText("") : { type: "refusal", refusal: "" };
      message.item.content.push(part);
      message.partOpen = true;
      controller.enqueue(partEvent("response.content_part.added", message, { part }));
    }
    return message;
  };
  const refusalDelta = (controller: StepOutput<string>, text: string) => {
    const m = partFor(controller, "refusal");
    (m.item.content.at(-1) as { refusal: string }).refusal += text;
    controller.enqueue(partEvent("response.refusal.delta", m, { delta: text }));
  };

  const argumentsDelta = (controller: StepOutput<string>, index: number, delta: string) => {
    const call = calls.get(index);
    if (!call) return;
    call.item.arguments += delta;
    controller.enqueue(event("response.function_call_arguments.delta", { item_id: call.item.id, output_index: call.index, delta }));
  };

  return endAtError((reason) => frame.failure(reason, output, usage), {
    transform(part, controller) {
      if (part.type === "native") return;
      frame.open(controller, part.type === "start" ? part.created : undefined);
      switch (part.type) {
        case "text-delta": {
          const m = partFor(controller, "output_text");
          (m.item.content.at(-1) as { text: string }).text += part.text;
          controller.enqueue(partEvent("response.output_text.delta", m, { delta: part.text, logprobs: [] }));
          break;
        }
        case "refusal-delta":
          refusalSaid = true;
          refusalDelta(controller, part.text);
          break;
        case "reasoning-delta": {
          const r = reasoningFor(controller);
          r.item.summary[0]!.text += part.text;
          controller.enqueue(summaryEvent("response.reasoning_summary_text.delta", r, { delta: part.text }));
          break;
        }
        case "tool-call-start": {
          closeReasoning(controller);
          closeMessage(controller, "completed");
          const call = { index: output.length, item: functionCallItem(newId("fc"), { callId: part.id, name: part.name, arguments: "" }, "in_progress", head.namespaced) };
          output.push(call.item);
          openCalls.push(call);
          calls.set(part.index, call);
          controller.enqueue(event("response.output_item.added", { output_index: call.index, item: call.item }));
          break;
        }
        case "tool-call-delta":
          argumentsDelta(controller, part.index, part.argumentsDelta);
          break;
        case "usage":
        case "finish":
          // Both belong to the Response's last event.
          if (part.type === "usage") usage = part.usage;
          else finish = part.finishReason;
      }
    },
    flush(controller) {
      frame.open(controller);
      if (finish === "refusal" && !refusalSaid) refusalDelta(controller, UNEXPLAINED_REFUSAL);
      const incompleteReason = incompleteReasonOf(finish);
      const status = incompleteReason ? "incomplete" : "completed";
      closeReasoning(controller);
      closeMessage(controller, status);
      closeCalls(controller, status);
      const response = frame.final({ status, output, usage: usage ?? { inputTokens: 0, outputTokens: 0 }, incompleteReason });
      keep?.(response);
      controller.enqueue(event(incompleteReason ? "response.incomplete" : "response.completed", { response }));
    },
  });
}
