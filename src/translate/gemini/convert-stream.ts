import { promptOf, type FinishReason, type StreamPart, type Usage } from "../../canonical/chat.ts";
import type { SseEvent } from "../../streams/sse.ts";
import { geminiErrorEvent } from "./error-event.ts";
import { framed, geminiFramingOf, type GeminiFraming } from "./stream-framing.ts";
import type { StepOutput, StreamStep } from "../../streams/stream-step.ts";
import { parseStreamEvent, unusableEventPart } from "../parse-stream-event.ts";
import { endAtError } from "../end-at-error.ts";
import { finishedAnswers } from "../finished-answers.ts";
import { parseToolArguments } from "../parse-tool-arguments.ts";
import { mapGeminiFinishReason, toGeminiFinishReason, unusableGeminiFinish } from "./map-finish-reason.ts";
import { contentOfCandidate, finishReasonOfGemini, GeminiResponseSchema, usageFromGemini, usageToGemini } from "./convert-response.ts";

/**
 * Upstream Gemini stream chunks -> canonical parts. Gemini sends each function call whole,
 * and usage on (at least) the last chunk, given as soon as every answer has finished (the
 * stream has no end event: a client that leaves before the body ends is billed by it, not by
 * an estimate), else when the body ends; a stream without a finishReason for each of the
 * `answers` candidates asked for (candidateCount), or a blocked prompt, was cut short. With
 * `native`, each chunk is also given as it came (a native part), for a relay to a Gemini
 * caller. Several candidates' parts come interleaved, read by billing alone: only a Gemini
 * caller, served by a relay, can ask for several.
 */
export function decodeGeminiChunks(now: () => number, native = false, answers = 1): StreamStep<SseEvent, StreamPart> {
  const allFinished = finishedAnswers(answers);
  let started = false;
  let finish: string | undefined;
  let finished = false;
  let usage: Usage | null = null;
  let usageGiven = false;
  let toolCalls = 0;
  let failed = false;
  return {
    transform(event, controller) {
      if (failed) return;
      const parsed = parseStreamEvent(GeminiResponseSchema, event.data);
      if (!parsed) {
        failed = true;
        controller.enqueue(unusableEventPart(event.data));
        return;
      }
      if (native) controller.enqueue({ type: "native", event, body: parsed.json });
      const chunk = parsed.value;
      if (chunk.usageMetadata) usage = usageFromGemini(chunk.usageMetadata);
      if (!started) {
        started = true;
        // Gemini counts the prompt on every chunk: the first one's count is the start's prompt.
        controller.enqueue({ type: "start", id: chunk.responseId ?? "", model: chunk.modelVersion ?? "", created: Math.floor(now() / 1000), prompt: usage ? promptOf(usage) : undefined });
      }
      const candidates = chunk.candidates;
      // One answer reads the first candidate alone, as it always did.
      for (let i = 0; candidates && i < candidates.length && i < answers; i++) {
        const candidate = candidates[i]!;
        for (const part of contentOfCandidate(candidate)) {
          if (part.type === "text") controller.enqueue({ type: "text-delta", text: part.text });
          else if (part.type === "reasoning") controller.enqueue({ type: "reasoning-delta", text: part.text });
          else if (part.type === "tool_call") {
            const index = toolCalls++;
            controller.enqueue({ type: "tool-call-start", index, id: part.id, name: part.name });
            controller.enqueue({ type: "tool-call-delta", index, argumentsDelta: part.arguments });
          }
        }
        if (candidate.finishReason) finished ||= allFinished(candidate.index ?? 0);
      }
      if (chunk.promptFeedback?.blockReason) finished = true;
      finish = finishReasonOfGemini(chunk) ?? finish;
      // Only once every answer has finished is a chunk's count final.
      if (finished && usage && chunk.usageMetadata) {
        controller.enqueue({ type: "usage", usage });
        usageGiven = true;
      }
    },
    flush(controller) {
      if (failed) return;
      if (!finished) {
        controller.enqueue({ type: "error", message: "upstream stream ended before the response was complete" });
        return;
      }
      if (usage && !usageGiven) controller.enqueue({ type: "usage", usage });
      // A Gemini caller gets Gemini's own ending, relayed; another, an answer it could not use.
      const unusable = native ? undefined : unusableGeminiFinish(finish);
      if (unusable) controller.enqueue({ type: "error", message: unusable, unusable: true });
      else controller.enqueue({ type: "finish", finishReason: mapGeminiFinishReason(finish, toolCalls > 0) });
    },
  };
}

/**
 * Canonical parts -> Gemini stream chunks (GenerateContentResponse), written as `framing`
 * says (SSE events, or the elements of one JSON array). Text is sent as it arrives; a function
 * call is sent whole once its arguments are complete, as Gemini does; the last chunk carries
 * finishReason and usageMetadata, and the calls still held at the end, as Gemini sends a
 * turn's calls. Without calls its content is an empty text part: the genai SDK's chat keeps a
 * streamed turn only when every chunk has content with a part. Google's legacy SDK keeps one
 * only when no part it aggregates is empty text, so a call turn must not end with one.
 */
export function renderGeminiChunks(model: string, fallbackId: string, framing: GeminiFraming = geminiFramingOf("sse")): StreamStep<StreamPart, string> {
  let id = fallbackId;
  let usage: Usage | null = null;
  let finish: FinishReason = "stop";
  const pendingCalls = new Map<number, { id: string; name: string; args: string }>();
  const chunk = (parts: Record<string, unknown>[], last?: { finishReason: string; usageMetadata: object }) =>
    framing.chunk(
      JSON.stringify({
        candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: last.finishReason } : {}) }],
        ...(last ? { usageMetadata: last.usageMetadata } : {}),
        modelVersion: model,
        responseId: id,
      }),
    );
  const takeCalls = () => {
    const parts = [...pendingCalls.values()].map((c) => ({ functionCall: { id: c.id, name: c.name, args: parseToolArguments(c.args) } }));
    pendingCalls.clear();
    return parts;
  };
  const flushCalls = (controller: StepOutput<string>) => {
    if (pendingCalls.size > 0) controller.enqueue(chunk(takeCalls()));
  };
  const render: StreamStep<StreamPart, string> = {
    transform(part, controller) {
      switch (part.type) {
        case "start":
          if (part.id) id = part.id;
          break;
        // Gemini has no place for a refusal's words but the answer's text.
        case "text-delta":
        case "refusal-delta":
          flushCalls(controller);
          controller.enqueue(chunk([{ text: part.text }]));
          break;
        case "reasoning-delta":
          flushCalls(controller);
          controller.enqueue(chunk([{ text: part.text, thought: true }]));
          break;
        case "tool-call-start":
          if (!pendingCalls.has(part.index)) pendingCalls.set(part.index, { id: part.id, name: part.name, args: "" });
          break;
        case "tool-call-delta": {
          const call = pendingCalls.get(part.index);
          if (call) call.args += part.argumentsDelta;
          break;
        }
        case "usage":
          usage = part.usage;
          break;
        case "finish":
          finish = part.finishReason;
          break;
      }
    },
    flush(controller) {
      const calls = takeCalls();
      controller.enqueue(
        chunk(calls.length > 0 ? calls : [{ text: "" }], {
          finishReason: toGeminiFinishReason(finish),
          usageMetadata: usageToGemini(usage ?? { inputTokens: 0, outputTokens: 0 }),
        }),
      );
    },
  };
  return framed(framing, endAtError((failure) => geminiErrorEvent(failure, framing), render));
}
