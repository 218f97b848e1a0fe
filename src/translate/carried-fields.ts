import type { WireFormat } from "../canonical/chat.ts";
import { anthropicEffort, geminiLevel, isAnthropicThinking, openAiEffort } from "./reasoning.ts";

/**
 * The request fields of a caller format that the canonical form carries to an upstream of
 * another format: `true` for a field carried whatever its value, a nested set for an object
 * whose own fields are listed, or a test for a field carried only with some values. Every
 * other field reaches only an upstream of the caller's format; for any other upstream it is
 * reported in `x-gateway-warnings` instead of vanishing.
 */
export type CarriedFields = { readonly [field: string]: true | CarriedFields | ((value: unknown) => boolean) };

const OPENAI: CarriedFields = {
  model: true,
  messages: true,
  temperature: true,
  top_p: true,
  max_tokens: true,
  max_completion_tokens: true,
  frequency_penalty: true,
  presence_penalty: true,
  stop: true,
  seed: true,
  n: true,
  stream: true,
  // include_usage is the gateway's own to honour: it counts usage for every upstream.
  stream_options: true,
  tools: true,
  tool_choice: true,
  parallel_tool_calls: true,
  response_format: true,
  user: true,
  safety_identifier: true,
  reasoning_effort: (value) => openAiEffort(value) !== undefined,
};

const ANTHROPIC: CarriedFields = {
  model: true,
  messages: true,
  system: true,
  max_tokens: true,
  temperature: true,
  top_p: true,
  top_k: true,
  stop_sequences: true,
  stream: true,
  tools: true,
  tool_choice: true,
  metadata: { user_id: (value) => typeof value === "string" },
  thinking: isAnthropicThinking,
  output_config: { format: true, effort: (value) => anthropicEffort(value) !== undefined },
};

/** Response MIME types the canonical form can express (plain text, or JSON). */
const carriedMimeType = (value: unknown) => value === "text/plain" || value === "application/json";

const GEMINI: CarriedFields = {
  contents: true,
  systemInstruction: true,
  tools: true,
  toolConfig: true,
  generationConfig: {
    temperature: true,
    topP: true,
    topK: true,
    maxOutputTokens: true,
    stopSequences: true,
    candidateCount: true,
    presencePenalty: true,
    frequencyPenalty: true,
    seed: true,
    responseMimeType: carriedMimeType,
    responseSchema: true,
    responseJsonSchema: true,
    thinkingConfig: {
      thinkingBudget: true,
      includeThoughts: true,
      thinkingLevel: (value) => value === "THINKING_LEVEL_UNSPECIFIED" || geminiLevel(value) !== undefined,
    },
  },
};

/**
 * OpenAI's Responses API, which no upstream is sent: a field outside this list reaches no
 * upstream at all. Some are honoured by what the gateway does anyway (no truncation, the
 * default service tier, no log probabilities); `store` has a warning of its own.
 */
const RESPONSES: CarriedFields = {
  model: true,
  input: true,
  instructions: true,
  tools: true,
  tool_choice: true,
  parallel_tool_calls: true,
  max_output_tokens: true,
  temperature: true,
  top_p: true,
  text: { format: true },
  reasoning: { effort: (value) => openAiEffort(value) !== undefined, summary: true },
  stream: true,
  store: true,
  user: true,
  safety_identifier: true,
  // The conversation it names comes before the input.
  previous_response_id: true,
  // Set, these are refused; null is their default.
  conversation: true,
  prompt: true,
  background: true,
  include: (value) => Array.isArray(value) && value.length === 0,
  truncation: (value) => value === "disabled",
  service_tier: (value) => value === "auto" || value === "default",
  top_logprobs: (value) => value === 0,
};

/** A caller format: one the upstreams speak, or the Responses API, which only callers do. */
export type CallerFormat = WireFormat | "responses";

const CARRIED: Record<CallerFormat, CarriedFields> = { openai: OPENAI, anthropic: ANTHROPIC, gemini: GEMINI, responses: RESPONSES };

/** The paths of the fields in a caller's `body` (of `format`) that an upstream of another format does not receive. */
export function fieldsLeftBehind(format: CallerFormat, body: Record<string, unknown>): string[] {
  const left: string[] = [];
  const walk = (object: Record<string, unknown>, carried: CarriedFields, prefix: string) => {
    for (const [field, value] of Object.entries(object)) {
      if (value === undefined || value === null) continue;
      const rule = Object.hasOwn(carried, field) ? carried[field] : undefined;
      if (rule === true) continue;
      if (typeof rule === "function" && rule(value)) continue;
      if (typeof rule === "object" && typeof value === "object" && !Array.isArray(value)) walk(value as Record<string, unknown>, rule, `${prefix}${field}.`);
      else left.push(`${prefix}${field}`);
    }
  };
  walk(body, CARRIED[format], "");
  return left;
}
