import * as v from "valibot";
import type { StreamPart, Usage } from "../../canonical/chat.ts";
import type { SseEvent } from "../../streams/sse.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import { openAiErrorEvent } from "./error-event.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { parseStreamEvent, unusableEventPart } from "../parse-stream-event.ts";
import { endAtError } from "../end-at-error.ts";
import { finishedAnswers } from "../finished-answers.ts";
import { toOpenAiFinishReason } from "./map-finish-reason.ts";
import { finishOfOpenAi, OpenAiUsageSchema, REASONING_FIELDS, reasoningTextOf, UNEXPLAINED_REFUSAL, usageFromOpenAi, usageToOpenAi } from "./convert-response.ts";
import { believableUsage, nullAsAbsent } from "../../lib/schemas.ts";
import { newId } from "../../lib/random-id.ts";

const ChunkSchema = v.looseObject({
  id: nullAsAbsent(v.string()),
  model: nullAsAbsent(v.string()),
  created: nullAsAbsent(v.number()),
  choices: v.optional(
    v.array(
      v.looseObject({
        index: nullAsAbsent(v.number()),
        delta: v.optional(
          v.looseObject({
            content: v.optional(v.nullable(v.string())),
            refusal: v.optional(v.nullable(v.string())),
            ...REASONING_FIELDS,
            tool_calls: v.optional(
              v.nullable(
                v.array(
                  v.looseObject({
                    index: nullAsAbsent(v.number()),
                    id: v.optional(v.nullable(v.string())),
                    function: v.optional(
                      v.looseObject({ name: v.optional(v.nullable(v.string())), arguments: v.optional(v.nullable(v.string())) }),
                    ),
                  }),
                ),
              ),
            ),
          }),
        ),
        finish_reason: v.optional(v.nullable(v.string())),
      }),
    ),
  ),
  usage: believableUsage(OpenAiUsageSchema),
});

/**
 * Upstream OpenAI chunk events -> canonical parts. A stream that stops before both `[DONE]`
 * and a finish_reason for each of the `answers` choices asked for (`n`) was cut short and
 * ends with an error part. With `native`, each chunk is also given as it came (a native
 * part), for a relay to an OpenAI caller. Several choices' parts come interleaved, read by
 * billing alone: only an OpenAI caller, served by a relay, can ask for several.
 *
 * A tool-call fragment is known only by its `index`, as the OpenAI SDK accumulates them:
 * the first fragment of an index starts the call, and an `id` or `name` that some
 * OpenAI-compatible servers repeat on later fragments does not start it again.
 */
export function decodeOpenAiChunks(now: () => number, native = false, answers = 1): StreamStep<SseEvent, StreamPart> {
  const startedCalls = new Set<number>();
  const allFinished = finishedAnswers(answers);
  let started = false;
  let refused = false;
  let finished = false;
  let done = false;
  return {
    transform(event, controller) {
      if (done) return;
      if (event.data === "[DONE]") {
        done = true;
        return;
      }
      const parsed = parseStreamEvent(ChunkSchema, event.data);
      if (!parsed) {
        controller.enqueue(unusableEventPart(event.data));
        done = true;
        return;
      }
      if (native) controller.enqueue({ type: "native", event, body: parsed.json });
      const chunk = parsed.value;
      if (!started) {
        started = true;
        controller.enqueue({ type: "start", id: chunk.id ?? "", model: chunk.model ?? "", created: chunk.created ?? Math.floor(now() / 1000) });
      }
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta;
        const reasoning = delta ? reasoningTextOf(delta) : "";
        if (reasoning) controller.enqueue({ type: "reasoning-delta", text: reasoning });
        if (delta?.content) controller.enqueue({ type: "text-delta", text: delta.content });
        if (delta?.refusal) {
          refused = true;
          controller.enqueue({ type: "refusal-delta", text: delta.refusal });
        }
        for (const call of delta?.tool_calls ?? []) {
          const index = call.index ?? 0;
          if (!startedCalls.has(index)) {
            startedCalls.add(index);
            controller.enqueue({ type: "tool-call-start", index, id: call.id || newId("call"), name: call.function?.name ?? "" });
          }
          if (call.function?.arguments) controller.enqueue({ type: "tool-call-delta", index, argumentsDelta: call.function.arguments });
        }
        if (choice.finish_reason) {
          finished ||= allFinished(choice.index ?? 0);
          controller.enqueue({ type: "finish", finishReason: finishOfOpenAi(choice.finish_reason, refused, startedCalls.size > 0) });
        }
      }
      if (chunk.usage) controller.enqueue({ type: "usage", usage: usageFromOpenAi(chunk.usage) });
    },
    flush(controller) {
      if (!done && !finished) controller.enqueue({ type: "error", message: "upstream stream ended before the response was complete" });
    },
    ended: () => done,
  };
}

/** The event that ends an OpenAI stream. */
export const OPENAI_STREAM_END = "data: [DONE]\n\n";

interface ChunkEncoderOptions {
  /** The public model ID shown to the caller. */
  model: string;
  /** Whether the caller asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  fallbackId: string;
  now: () => number;
}

/**
 * Canonical parts -> OpenAI `chat.completion.chunk` SSE text, ending with the usage chunk
 * (when asked for) and `data: [DONE]`. An error part becomes an error event and ends it.
 * A refusal's words come as `delta.refusal`; one that had none gets a refusal chunk of the
 * gateway's before its finish, since a refusal is known by that text. Thinking comes as
 * `delta.reasoning_content`, as OpenAI-compatible servers stream it.
 */
export function renderOpenAiChunks(options: ChunkEncoderOptions): StreamStep<StreamPart, string> {
  let id = `chatcmpl-${options.fallbackId}`;
  let created = Math.floor(options.now() / 1000);
  let usage: Usage | null = null;
  let refusalSaid = false;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    formatSseEvent(
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model: options.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        // With include_usage, OpenAI's every chunk but the last has `usage: null`.
        ...(options.includeUsage ? { usage: null } : {}),
      }),
    );
  return endAtError(openAiErrorEvent, {
    transform(part, controller) {
      switch (part.type) {
        case "start":
          if (part.id) id = part.id.startsWith("chatcmpl") ? part.id : `chatcmpl-${part.id}`;
          created = part.created;
          controller.enqueue(chunk({ role: "assistant", content: "" }));
          break;
        case "text-delta":
          controller.enqueue(chunk({ content: part.text }));
          break;
        case "reasoning-delta":
          controller.enqueue(chunk({ reasoning_content: part.text }));
          break;
        case "refusal-delta":
          refusalSaid = true;
          controller.enqueue(chunk({ refusal: part.text }));
          break;
        case "tool-call-start":
          controller.enqueue(
            chunk({ tool_calls: [{ index: part.index, id: part.id, type: "function", function: { name: part.name, arguments: "" } }] }),
          );
          break;
        case "tool-call-delta":
          controller.enqueue(chunk({ tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] }));
          break;
        case "finish":
          if (part.finishReason === "refusal" && !refusalSaid) controller.enqueue(chunk({ refusal: UNEXPLAINED_REFUSAL }));
          controller.enqueue(chunk({}, toOpenAiFinishReason(part.finishReason)));
          break;
        case "usage":
          usage = part.usage;
          break;
      }
    },
    flush(controller) {
      if (options.includeUsage) controller.enqueue(openAiUsageChunk({ id, created, model: options.model }, usage ?? { inputTokens: 0, outputTokens: 0 }));
      controller.enqueue(OPENAI_STREAM_END);
    },
  });
}

/** The chunk that ends a stream whose caller asked for usage (`stream_options.include_usage`): no choices, the usage. */
export function openAiUsageChunk(head: { id: unknown; created: unknown; model: string }, usage: Usage): string {
  return formatSseEvent(JSON.stringify({ id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, choices: [], usage: usageToOpenAi(usage) }));
}
