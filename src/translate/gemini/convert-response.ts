import * as v from "valibot";
import { newId } from "../../lib/random-id.ts";
import { callIdCarrying } from "./thought-signature-id.ts";
import { partsWithRefusal, type ChatResponse, type AnswerPart, type Usage } from "../../canonical/chat.ts";
import { believableUsage, TokenCountSchema } from "../../lib/schemas.ts";
import type { UsageField } from "../relay-native.ts";
import { parseToolArguments } from "../parse-tool-arguments.ts";
import { mapGeminiFinishReason, toGeminiFinishReason } from "./map-finish-reason.ts";

/**
 * Gemini's usageMetadata; lenient, only the fields used. Gemini leaves out counts of 0 (no
 * candidatesTokenCount for an empty answer), but every answer counts its prompt: one without
 * promptTokenCount is not believed (the estimate is charged) rather than a free prompt.
 */
export const GeminiUsageSchema = v.looseObject({
  promptTokenCount: TokenCountSchema,
  candidatesTokenCount: v.optional(v.nullable(TokenCountSchema)),
  thoughtsTokenCount: v.optional(v.nullable(TokenCountSchema)),
  cachedContentTokenCount: v.optional(v.nullable(TokenCountSchema)),
  toolUsePromptTokenCount: v.optional(v.nullable(TokenCountSchema)),
});

const ResponsePartSchema = v.looseObject({
  text: v.optional(v.string()),
  thought: v.optional(v.boolean()),
  thoughtSignature: v.optional(v.string()),
  functionCall: v.optional(v.looseObject({ name: v.string(), args: v.optional(v.unknown()), id: v.optional(v.string()) })),
});

/** One generateContent response or stream chunk; lenient, only the fields used. */
export const GeminiResponseSchema = v.looseObject({
  candidates: v.optional(
    v.array(
      v.looseObject({
        content: v.optional(v.looseObject({ parts: v.optional(v.array(ResponsePartSchema)) })),
        finishReason: v.optional(v.string()),
        // Which answer, of several asked for with candidateCount; proto3 JSON leaves out 0.
        index: v.optional(v.number()),
      }),
    ),
  ),
  usageMetadata: believableUsage(GeminiUsageSchema),
  promptFeedback: v.optional(v.looseObject({ blockReason: v.optional(v.string()) })),
  responseId: v.optional(v.string()),
  modelVersion: v.optional(v.string()),
});

export type GeminiResponse = v.InferOutput<typeof GeminiResponseSchema>;

/**
 * Gemini usage in canonical terms, as Google bills it: thinking tokens as output, and the
 * prompts of its own tools (search grounding, code execution), which promptTokenCount leaves
 * out, as input.
 */
export function usageFromGemini(usage: v.InferOutput<typeof GeminiUsageSchema>): Usage {
  const cached = usage.cachedContentTokenCount ?? 0;
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    inputTokens: usage.promptTokenCount + (usage.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
    // Gemini leaves out counts of 0, so a model that did not think reports nothing here.
    ...(thoughts > 0 ? { reasoningTokens: thoughts } : {}),
  };
}

/**
 * Canonical usage as Gemini's usageMetadata, whose candidatesTokenCount leaves out the
 * thinking that thoughtsTokenCount counts (the total counts both).
 */
export function usageToGemini(usage: Usage) {
  const thoughts = usage.reasoningTokens ?? 0;
  return {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: usage.outputTokens - thoughts,
    totalTokenCount: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  };
}

/** Where a Gemini response (and each chunk of its stream) carries its usage. */
export const GEMINI_USAGE_FIELD: UsageField = { name: "usageMetadata", counts: ["promptTokenCount", "candidatesTokenCount", "totalTokenCount"], render: usageToGemini };

type GeminiCandidate = NonNullable<GeminiResponse["candidates"]>[number];

/** The thought, text and function-call parts of one candidate. */
export function contentOfCandidate(candidate: GeminiCandidate | undefined): AnswerPart[] {
  const content: AnswerPart[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.thought) {
      if (part.text) content.push({ type: "reasoning", text: part.text });
      continue;
    }
    if (part.text !== undefined && part.text !== "") content.push({ type: "text", text: part.text });
    if (part.functionCall) {
      const call = part.functionCall;
      // Gemini pairs calls and responses by name and often sends no id; OpenAI and Anthropic
      // callers key tool results by id, so two calls of one function need ids of their own.
      const id = part.thoughtSignature ? callIdCarrying(part.thoughtSignature) : (call.id ?? newId("call"));
      content.push({ type: "tool_call", id, name: call.name, arguments: JSON.stringify(call.args ?? {}) });
    }
  }
  return content;
}

/**
 * How a response or chunk finished: its first candidate's finishReason, or SAFETY when the
 * prompt itself was blocked (promptFeedback.blockReason, no candidates): a finished answer,
 * filtered, not a broken one.
 */
export function finishReasonOfGemini(body: GeminiResponse): string | undefined {
  return body.candidates?.[0]?.finishReason ?? (body.promptFeedback?.blockReason ? "SAFETY" : undefined);
}

/** An upstream generateContent response in canonical form: its first candidate, and any others as otherAnswers. */
export function convertGeminiResponseToCanonical(body: GeminiResponse, now: number): ChatResponse {
  const content = contentOfCandidate(body.candidates?.[0]);
  const response: ChatResponse = {
    id: body.responseId ?? "",
    model: body.modelVersion ?? "",
    created: Math.floor(now / 1000),
    content,
    finishReason: mapGeminiFinishReason(finishReasonOfGemini(body), content.some((p) => p.type === "tool_call")),
    usage: body.usageMetadata ? usageFromGemini(body.usageMetadata) : null,
  };
  const candidates = body.candidates;
  if (candidates && candidates.length > 1) response.otherAnswers = candidates.slice(1).map(contentOfCandidate);
  return response;
}

/** Canonical parts as Gemini response parts, thinking as thought summaries. */
export function geminiPartsOf(content: readonly AnswerPart[]): Record<string, unknown>[] {
  return content.flatMap((part): Record<string, unknown>[] => {
    if (part.type === "text") return [{ text: part.text }];
    if (part.type === "reasoning") return [{ text: part.text, thought: true }];
    if (part.type === "tool_call") return [{ functionCall: { id: part.id, name: part.name, args: parseToolArguments(part.arguments) } }];
    return [];
  });
}

/** A canonical response as a spec 2.4 generateContent response. */
export function convertCanonicalToGeminiResponse(response: ChatResponse, model: string) {
  return {
    candidates: [
      { content: { role: "model", parts: geminiPartsOf(partsWithRefusal(response)) }, finishReason: toGeminiFinishReason(response.finishReason), index: 0 },
    ],
    usageMetadata: usageToGemini(response.usage ?? { inputTokens: 0, outputTokens: 0 }),
    modelVersion: model,
    responseId: response.id,
  };
}
