import * as v from "valibot";
import { newId } from "../../lib/random-id.ts";
import type { AnswerPart, ChatResponse, FinishReason, Usage } from "../../canonical/chat.ts";
import { believableUsage, nullAsAbsent, TokenCountSchema } from "../../lib/schemas.ts";
import type { UsageField } from "../relay-native.ts";
import { mapOpenAiFinishReason, toOpenAiFinishReason } from "./map-finish-reason.ts";

/**
 * OpenAI's usage object; lenient, only the fields used. OpenAI always reports both counts, so
 * a usage without one is not believed (the estimate is charged) rather than read as 0 tokens.
 */
export const OpenAiUsageSchema = v.looseObject({
  prompt_tokens: TokenCountSchema,
  completion_tokens: TokenCountSchema,
  prompt_tokens_details: v.optional(v.nullable(v.looseObject({ cached_tokens: v.optional(v.nullable(TokenCountSchema)) }))),
  // Only told to the caller, never billed apart: a count not believable is left out, not the usage.
  completion_tokens_details: v.fallback(v.optional(v.nullable(v.looseObject({ reasoning_tokens: v.fallback(v.optional(v.nullable(TokenCountSchema)), undefined) }))), undefined),
});

/**
 * Where OpenAI-compatible servers put a reasoning model's thinking, in a message or a delta:
 * `reasoning_content` (DeepSeek, vLLM, SGLang) or `reasoning` (OpenRouter, Groq, newer vLLM).
 * Unknown shapes are not an error: OpenAI itself sends neither.
 */
export const REASONING_FIELDS = { reasoning_content: v.optional(v.unknown()), reasoning: v.optional(v.unknown()) };

/** The reasoning text of a message or delta with REASONING_FIELDS, or "" when it has none. */
export function reasoningTextOf(fields: { reasoning_content?: unknown; reasoning?: unknown }): string {
  const text = typeof fields.reasoning_content === "string" ? fields.reasoning_content : fields.reasoning;
  return typeof text === "string" ? text : "";
}

const ToolCallSchema = v.looseObject({
  id: nullAsAbsent(v.string()),
  function: nullAsAbsent(v.looseObject({ name: nullAsAbsent(v.string()), arguments: nullAsAbsent(v.string()) })),
});

/** An upstream chat.completion body; lenient, only the fields used. */
export const OpenAiChatResponseSchema = v.looseObject({
  id: nullAsAbsent(v.string()),
  created: nullAsAbsent(v.number()),
  model: nullAsAbsent(v.string()),
  choices: v.array(
    v.looseObject({
      message: v.optional(
        v.looseObject({
          content: v.optional(v.nullable(v.string())),
          refusal: v.optional(v.nullable(v.string())),
          tool_calls: v.optional(v.nullable(v.array(ToolCallSchema))),
          ...REASONING_FIELDS,
        }),
      ),
      finish_reason: v.optional(v.nullable(v.string())),
    }),
  ),
  usage: believableUsage(OpenAiUsageSchema),
});

/** OpenAI usage in canonical terms. */
export function usageFromOpenAi(usage: v.InferOutput<typeof OpenAiUsageSchema>): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(reasoning != null ? { reasoningTokens: Math.min(reasoning, usage.completion_tokens) } : {}),
  };
}

/** Canonical usage as OpenAI writes it. */
export function usageToOpenAi(usage: Usage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } } : {}),
    ...(usage.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } } : {}),
  };
}

/** Where an OpenAI chat completion carries its usage. */
export const OPENAI_USAGE_FIELD: UsageField = { name: "usage", counts: ["prompt_tokens", "completion_tokens", "total_tokens"], render: usageToOpenAi };

/**
 * The finish reason of an OpenAI answer: a refusal comes with finish_reason "stop" and its
 * words in `refusal`. An answer that called tools and says "stop" finished to have them run:
 * OpenAI answers so when a tool is named in tool_choice, as do vLLM, SGLang and older Ollama,
 * and callers of the other formats (Anthropic's SDK tool runner, Gemini's) loop only on
 * tool_use.
 */
export function finishOfOpenAi(finishReason: string | null | undefined, refused: boolean, calledTools: boolean): FinishReason {
  const finish = mapOpenAiFinishReason(finishReason);
  if (finish !== "stop") return finish;
  return refused ? "refusal" : calledTools ? "tool_calls" : finish;
}

/**
 * What an OpenAI caller's `refusal` says when the upstream declined without words (Anthropic's
 * classifiers may give none): OpenAI callers and its SDK tell a refusal by that text.
 */
export const UNEXPLAINED_REFUSAL = "The model refused to answer and gave no reason.";

type OpenAiChoice = v.InferOutput<typeof OpenAiChatResponseSchema>["choices"][number];

/** A choice's reasoning, text and tool calls, and its refusal's words as text when `withRefusal`. */
function contentOfChoice(choice: OpenAiChoice | undefined, withRefusal: boolean): AnswerPart[] {
  const content: AnswerPart[] = [];
  const message = choice?.message;
  const reasoning = message ? reasoningTextOf(message) : "";
  if (reasoning) content.push({ type: "reasoning", text: reasoning });
  if (message?.content) content.push({ type: "text", text: message.content });
  for (const call of message?.tool_calls ?? []) {
    // A server that gives no id (or an empty one) gets one made, as the stream does: a caller pairs the result by it.
    content.push({ type: "tool_call", id: call.id || newId("call"), name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" });
  }
  if (withRefusal && message?.refusal) content.push({ type: "text", text: message.refusal });
  return content;
}

/** An upstream chat.completion in the canonical form: its first choice, and any others as otherAnswers. */
export function convertOpenAiChatResponseToCanonical(body: v.InferOutput<typeof OpenAiChatResponseSchema>, now: number): ChatResponse {
  const choice = body.choices[0];
  const refusal = choice?.message?.refusal;
  const content = contentOfChoice(choice, false);
  const response: ChatResponse = {
    id: body.id ?? "",
    model: body.model ?? "",
    created: body.created ?? Math.floor(now / 1000),
    content,
    finishReason: finishOfOpenAi(choice?.finish_reason, Boolean(refusal), content.some((part) => part.type === "tool_call")),
    ...(refusal ? { refusal } : {}),
    usage: body.usage ? usageFromOpenAi(body.usage) : null,
  };
  if (body.choices.length > 1) response.otherAnswers = body.choices.slice(1).map((other) => contentOfChoice(other, true));
  return response;
}

/**
 * A canonical response as a spec 2.2 chat.completion for the public `model`. A refusal is
 * OpenAI's: its words in `refusal`, `content` null (what came before an Anthropic refusal is
 * an answer its classifiers cut off), finish_reason "stop". The model's thinking, which
 * OpenAI does not show, is in `reasoning_content`, where OpenAI-compatible servers put it.
 */
export function convertCanonicalToOpenAiChatResponse(response: ChatResponse, model: string) {
  let text: string | null = null;
  let reasoning = "";
  const toolCalls: unknown[] = [];
  for (const part of response.content) {
    if (part.type === "text") text = (text ?? "") + part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool_call") {
      toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
    }
  }
  const refused = response.finishReason === "refusal";
  // `refusal` is always there, null when the model did not refuse, as OpenAI sends it and its
  // SDK types it: callers test it against null.
  const message: Record<string, unknown> = {
    role: "assistant",
    content: refused ? null : (text ?? (toolCalls.length > 0 ? null : "")),
    refusal: refused ? response.refusal || UNEXPLAINED_REFUSAL : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  const usage = response.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    id: response.id.startsWith("chatcmpl") ? response.id : `chatcmpl-${response.id}`,
    object: "chat.completion",
    created: response.created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: toOpenAiFinishReason(response.finishReason) }],
    usage: usageToOpenAi(usage),
  };
}
