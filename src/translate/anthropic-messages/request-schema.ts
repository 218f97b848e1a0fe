import * as v from "valibot";
import { integerAtLeast, numberInRange } from "../../lib/validate.ts";
import { JsonObjectSchema, ModelIdSchema, otherTypedObject } from "../../lib/schemas.ts";
import { ANTHROPIC_THINKING_TYPES } from "../reasoning.ts";
import { badRequest } from "../../errors/gateway-error.ts";

const TextBlock = v.looseObject({ type: v.literal("text"), text: v.string() });
const ImageBlock = v.looseObject({
  type: v.literal("image"),
  source: v.variant("type", [
    v.object({ type: v.literal("base64"), media_type: v.string(), data: v.string() }),
    v.object({ type: v.literal("url"), url: v.string() }),
    // An upload to Anthropic's Files API: only an anthropic upstream can resolve its ID.
    v.looseObject({ type: v.literal("file"), file_id: v.string() }),
  ]),
});
const ToolUseBlock = v.looseObject({
  type: v.literal("tool_use"),
  id: v.string(),
  name: v.string(),
  input: JsonObjectSchema,
});
const MODELLED_BLOCK_TYPES = ["text", "image", "tool_use", "tool_result"];
/** Thinking, redacted_thinking, document, search_result, server tool blocks...: sent as they are to an anthropic upstream. */
const OtherBlock = otherTypedObject(MODELLED_BLOCK_TYPES);
const ToolResultBlock = v.looseObject({
  type: v.literal("tool_result"),
  tool_use_id: v.string(),
  content: v.optional(v.union([v.string(), v.array(v.variant("type", [TextBlock, ImageBlock, OtherBlock], "a content block needs a 'type'"))])),
  is_error: v.optional(v.boolean()),
});

const ModelledBlock = v.variant("type", [TextBlock, ImageBlock, ToolUseBlock, ToolResultBlock]);
const ContentBlock = v.variant("type", [ModelledBlock, OtherBlock], "a content block needs a 'type'");

/** A block of a type the canonical form carries. */
export type ModelledBlock = v.InferOutput<typeof ModelledBlock>;
/** Whether `block` is one of the types the canonical form carries (else it was accepted as another). */
export const isModelledBlock = (block: { type: string }): block is ModelledBlock => MODELLED_BLOCK_TYPES.includes(block.type);

/** The anthropic-beta flag under which Claude Code sends system messages among its turns. */
export const MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system-2026-04-07";
const ROLES = `must be 'user' or 'assistant' ('system' too, with the anthropic-beta flag ${MID_CONVERSATION_SYSTEM_BETA})`;
const Turn = v.object({
  role: v.picklist(["user", "assistant"], ROLES),
  content: v.union([v.string(), v.array(ContentBlock)], "must be a string or an array of content blocks"),
});
/**
 * Instructions given mid-conversation (Claude Code sends them): Anthropic's newer models take a
 * system message among the turns, and its placement rules are the upstream's to enforce. The
 * contract's messages are user and assistant turns only (spec 4.2), so one is taken only from a
 * caller that asks for the feature by its beta flag (refuseUnaskedSystemTurns).
 */
const SystemMessage = v.object({
  role: v.literal("system"),
  content: v.union([v.string(), v.array(TextBlock)], "must be a string or an array of text blocks"),
});
const Message = v.variant("role", [Turn, SystemMessage], ROLES);

type Message = v.InferOutput<typeof Message>;

/**
 * Refuses, as the contract does, a system message among the turns of a caller that did not ask
 * for mid-conversation system messages: `beta` (its anthropic-beta header) names no flag of
 * that feature, whatever its date.
 */
export function refuseUnaskedSystemTurns(messages: readonly { role: string }[], beta: string | undefined): void {
  if (beta?.split(",").some((flag) => flag.trim().startsWith("mid-conversation-system-"))) return;
  const at = messages.findIndex((message) => message.role === "system");
  if (at >= 0) throw badRequest(`Invalid 'messages[${at}].role': ${ROLES}`, `messages[${at}].role`);
}

/**
 * The first message with nothing in it (an empty string or no blocks), or -1. Anthropic refuses
 * such a turn with a 400; only the final assistant message, a prefill, may be empty. Other
 * upstreams would take it or fail in their own words, so it is refused here, for every channel.
 */
function emptyTurnIndex(messages: Message[]): number {
  return messages.findIndex((message, index) => {
    const finalAssistant = index === messages.length - 1 && message.role === "assistant";
    return !finalAssistant && message.content.length === 0;
  });
}

const CustomTool = v.looseObject({
  type: v.optional(v.literal("custom")),
  // Anthropic takes up to 128 characters (MCP-prefixed names such as mcp__server__tool pass 64).
  name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, "tool name must be 1-128 letters, digits, '_' or '-'")),
  description: v.optional(v.string()),
  input_schema: JsonObjectSchema,
  strict: v.optional(v.boolean("must be a boolean")),
});
/**
 * A tool Anthropic runs itself (web search, code execution...): its `type` says which; no
 * input_schema. `max_uses`, the most times it may run, is what a web search's hold counts.
 */
const ServerTool = v.looseObject({
  type: v.pipe(v.string(), v.check((type) => type !== "custom")),
  name: v.string(),
  max_uses: v.optional(integerAtLeast(1)),
});
const Tool = v.variant("type", [CustomTool, ServerTool]);

/** A tool the caller defines (name, description, input_schema), as opposed to a server tool. */
export type CustomTool = v.InferOutput<typeof CustomTool>;
/** Whether `tool` is one the caller defines; a server tool's `type` names it instead. */
export const isCustomTool = (tool: { type?: string }): tool is CustomTool => tool.type === undefined || tool.type === "custom";

/** A tool Anthropic runs itself. */
export type ServerTool = v.InferOutput<typeof ServerTool>;

const disableParallelToolUse = v.optional(v.boolean("must be a boolean"));
const ToolChoice = v.variant("type", [
  v.looseObject({ type: v.literal("auto"), disable_parallel_tool_use: disableParallelToolUse }),
  v.looseObject({ type: v.literal("any"), disable_parallel_tool_use: disableParallelToolUse }),
  v.looseObject({ type: v.literal("none") }),
  v.looseObject({ type: v.literal("tool"), name: v.string(), disable_parallel_tool_use: disableParallelToolUse }),
]);

/**
 * Anthropic's structured outputs: `format` holds the answer's text to a JSON Schema (the one
 * kind there is); `effort` is how much the model spends, its thinking included. Fields to
 * come are kept for an anthropic upstream, unchecked.
 */
const OutputConfig = v.looseObject({
  format: v.optional(v.nullable(v.looseObject({ type: v.literal("json_schema", "must be 'json_schema'"), schema: JsonObjectSchema }))),
  effort: v.optional(v.string("must be a string")),
});

/**
 * Extended thinking: a budget of at least 1,024 tokens (as Anthropic requires), off, or
 * adaptive (the model decides, by `effort`); a type Anthropic adds later is kept for an
 * anthropic upstream.
 */
const Thinking = v.variant(
  "type",
  [
    v.looseObject({ type: v.literal("enabled"), budget_tokens: integerAtLeast(1024) }),
    v.looseObject({ type: v.literal("disabled") }),
    v.looseObject({ type: v.literal("adaptive") }),
    otherTypedObject(ANTHROPIC_THINKING_TYPES),
  ],
  "must be an object with a 'type'",
);

/** POST /v1/messages, validated as spec 4.2; unknown fields kept for a same-format upstream. */
export const MessagesRequestSchema = v.looseObject({
  model: ModelIdSchema,
  messages: v.pipe(
    v.array(Message, "must be an array of messages"),
    v.minLength(1, "must contain at least one message"),
    v.check(
      (messages) => emptyTurnIndex(messages) === -1,
      (issue) => `messages[${emptyTurnIndex(issue.input as Message[])}] has empty content; only the final assistant message may be empty`,
    ),
  ),
  system: v.optional(v.union([v.string(), v.array(TextBlock)], "must be a string or an array of text blocks")),
  max_tokens: integerAtLeast(1),
  temperature: v.optional(numberInRange(0, 1)),
  top_p: v.optional(numberInRange(0, 1)),
  top_k: v.optional(integerAtLeast(0)),
  stop_sequences: v.optional(v.array(v.string())),
  stream: v.optional(v.boolean("must be a boolean")),
  tools: v.optional(v.array(Tool)),
  tool_choice: v.optional(ToolChoice),
  metadata: v.optional(JsonObjectSchema),
  output_config: v.optional(OutputConfig),
  thinking: v.optional(Thinking),
});

export type MessagesRequest = v.InferOutput<typeof MessagesRequestSchema>;

/**
 * POST /v1/messages/count_tokens: the prompt fields of a messages body, checked as there
 * (output_config too: a format adds to the prompt what tells the model of it). The answer's
 * fields (max_tokens, sampling, stream) are not the count endpoint's: sent anyway, they are
 * kept like any unknown field (`thinking`...), and an anthropic upstream refuses them as it
 * would the caller.
 */
export const CountTokensRequestSchema = v.pick(MessagesRequestSchema, ["model", "messages", "system", "tools", "tool_choice", "output_config"]);

/** A messages prompt: a count_tokens body, and the prompt part of every messages body. */
export type AnthropicPrompt = v.InferOutput<typeof CountTokensRequestSchema>;
