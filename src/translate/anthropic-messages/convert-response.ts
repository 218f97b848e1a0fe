import * as v from "valibot";
import { partsWithRefusal, type AnswerPart, type ChatResponse, type SignedThinking, type Usage } from "../../canonical/chat.ts";
import { believableUsage, TokenCountSchema } from "../../lib/schemas.ts";
import type { UsageField } from "../relay-native.ts";
import { anthropicStopOf, mapAnthropicStopReason } from "./map-stop-reason.ts";
import { parseToolArguments } from "../parse-tool-arguments.ts";

/** Anthropic's usage object; lenient, only the fields used. */
export const AnthropicUsageSchema = v.looseObject({
  input_tokens: v.optional(v.nullable(TokenCountSchema)),
  output_tokens: v.optional(v.nullable(TokenCountSchema)),
  cache_read_input_tokens: v.optional(v.nullable(TokenCountSchema)),
  cache_creation_input_tokens: v.optional(v.nullable(TokenCountSchema)),
  /** cache_creation_input_tokens by the lifetime of the cache entries written (newer answers). */
  cache_creation: v.optional(
    v.nullable(
      v.looseObject({
        ephemeral_5m_input_tokens: v.optional(v.nullable(TokenCountSchema)),
        ephemeral_1h_input_tokens: v.optional(v.nullable(TokenCountSchema)),
      }),
    ),
  ),
  /** What server tools ran: searches are billed apiece. A stream gives it in message_delta. */
  server_tool_use: v.optional(v.nullable(v.looseObject({ web_search_requests: v.optional(v.nullable(TokenCountSchema)) }))),
});

/** Why the model declined, beside stop_reason "refusal" (newer answers); lenient, the field used. */
export const RefusalDetailsSchema = v.looseObject({ explanation: v.optional(v.nullable(v.string())) });

/** A content block of an upstream message, or as a stream's content_block_start gives it; lenient, only the fields used. */
export const AnthropicContentBlockSchema = v.looseObject({
  type: v.string(),
  text: v.optional(v.string()),
  thinking: v.optional(v.string()),
  signature: v.optional(v.string()),
  data: v.optional(v.string()),
  id: v.optional(v.string()),
  name: v.optional(v.string()),
  input: v.optional(v.unknown()),
});

/** An upstream messages response; lenient, only the fields used. */
export const AnthropicResponseSchema = v.looseObject({
  id: v.optional(v.string()),
  model: v.optional(v.string()),
  content: v.array(AnthropicContentBlockSchema),
  stop_reason: v.optional(v.nullable(v.string())),
  stop_details: v.optional(v.nullable(RefusalDetailsSchema)),
  usage: believableUsage(AnthropicUsageSchema),
});

/**
 * Anthropic usage in canonical terms. Anthropic counts cache reads and writes apart from
 * input_tokens; canonical input counts every prompt token, cached and written ones included.
 * Writes are split by lifetime when the answer says (cache_creation); an older answer's
 * writes are all of the default lifetime, 5 minutes.
 */
export function usageFromAnthropic(usage: v.InferOutput<typeof AnthropicUsageSchema>): Usage {
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  const written5m = usage.cache_creation ? (usage.cache_creation.ephemeral_5m_input_tokens ?? 0) : written;
  const written1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const searches = usage.server_tool_use?.web_search_requests ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + cached + written,
    outputTokens: usage.output_tokens ?? 0,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
    ...(written5m > 0 ? { cacheWrite5mTokens: written5m } : {}),
    ...(written1h > 0 ? { cacheWrite1hTokens: written1h } : {}),
    ...(searches > 0 ? { webSearches: searches } : {}),
  };
}

/**
 * Canonical usage as Anthropic writes it: the inverse of usageFromAnthropic, cache reads and
 * writes counted apart from input_tokens. Both cache counts are always written, 0 when nothing
 * was cached, as Anthropic sends them: the SDK types them `number | null`, never absent, and
 * code that adds them to input_tokens got NaN from undefined.
 */
export function usageToAnthropic(usage: Usage) {
  const cached = usage.cachedInputTokens ?? 0;
  const written = (usage.cacheWrite5mTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  return {
    input_tokens: usage.inputTokens - cached - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    output_tokens: usage.outputTokens,
  };
}

/** Where an Anthropic message (and its stream's message_delta) carries its usage. */
export const ANTHROPIC_USAGE_FIELD: UsageField = { name: "usage", counts: ["input_tokens", "output_tokens"], render: usageToAnthropic };

/** A thinking block of an answer, as its upstream gave it or as a stream's events assembled it. */
export type ThinkingBlock = { type: string; thinking?: string; signature?: string; data?: string };

/** Whether a content block is thinking, signed, encrypted whole or neither. */
export const isThinkingBlock = (block: { type: string }) => block.type === "thinking" || block.type === "redacted_thinking";

/**
 * An answer's thinking blocks as they can be sent back, or undefined: Anthropic wants them all,
 * verbatim and in order (a thinking block with its signature, a redacted one with its data),
 * and refuses a sequence with one left out, so one that came without them spoils the lot.
 */
export function sendableThinking(blocks: readonly ThinkingBlock[]): SignedThinking[] | undefined {
  const sendable: SignedThinking[] = [];
  for (const block of blocks) {
    if (block.type === "thinking" && block.thinking !== undefined && block.signature) sendable.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
    else if (block.type === "redacted_thinking" && block.data) sendable.push({ type: "redacted_thinking", data: block.data });
    else return undefined;
  }
  return sendable.length > 0 ? sendable : undefined;
}

/** An upstream messages response in canonical form; redacted thinking, encrypted, is Anthropic's alone. */
export function convertAnthropicResponseToCanonical(body: v.InferOutput<typeof AnthropicResponseSchema>, now: number): ChatResponse {
  const content: AnswerPart[] = [];
  for (const block of body.content) {
    if (block.type === "text" && block.text !== undefined) content.push({ type: "text", text: block.text });
    else if (block.type === "thinking" && block.thinking) content.push({ type: "reasoning", text: block.thinking });
    else if (block.type === "tool_use") {
      content.push({ type: "tool_call", id: block.id ?? "", name: block.name ?? "", arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  // Wanted back only with the answer's tool calls. Thinking between them (interleaved) would go
  // back before the first call, moved: not kept.
  const firstCall = body.content.findIndex((block) => block.type === "tool_use");
  const keepable = firstCall >= 0 && !body.content.slice(firstCall).some(isThinkingBlock);
  const signedThinking = keepable ? sendableThinking(body.content.filter(isThinkingBlock)) : undefined;
  return {
    id: body.id ?? "",
    model: body.model ?? "",
    created: Math.floor(now / 1000),
    content,
    finishReason: mapAnthropicStopReason(body.stop_reason),
    ...(body.stop_details?.explanation ? { refusal: body.stop_details.explanation } : {}),
    usage: body.usage ? usageFromAnthropic(body.usage) : null,
    ...(signedThinking ? { signedThinking } : {}),
  };
}

/** A message id in Anthropic's style. */
export function anthropicMessageId(id: string): string {
  return id.startsWith("msg_") ? id : `msg_${id.replace(/[^A-Za-z0-9]/g, "")}`;
}

/**
 * A thinking block of another provider's thinking: its signature, which only Anthropic can
 * make, is empty, so an anthropic upstream refuses the block if it is sent back.
 */
export const thinkingBlock = (thinking: string) => ({ type: "thinking", thinking, signature: "" });

/** A canonical response as a spec 2.3 messages-style response. */
export function convertCanonicalToAnthropicResponse(response: ChatResponse, model: string) {
  const content = partsWithRefusal(response).flatMap((part): Record<string, unknown>[] => {
    if (part.type === "text") return [{ type: "text", text: part.text }];
    if (part.type === "reasoning") return [thinkingBlock(part.text)];
    if (part.type === "tool_call") return [{ type: "tool_use", id: part.id, name: part.name, input: parseToolArguments(part.arguments) }];
    return [];
  });
  return {
    id: anthropicMessageId(response.id),
    type: "message",
    role: "assistant",
    content,
    model,
    ...anthropicStopOf(response.finishReason, response.stopSequence),
    usage: usageToAnthropic(response.usage ?? { inputTokens: 0, outputTokens: 0 }),
  };
}
