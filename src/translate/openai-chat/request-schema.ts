import * as v from "valibot";
import { integerAtLeast, integerInRange, numberInRange } from "../../lib/validate.ts";
import { JsonObjectSchema, ModelIdSchema, nullAsAbsent, objectOnly, otherTypedObject } from "../../lib/schemas.ts";

const TextPart = v.object({ type: v.literal("text"), text: v.string() });
const ImagePart = v.object({
  type: v.literal("image_url"),
  image_url: v.object({ url: v.pipe(v.string(), v.minLength(1)), detail: nullAsAbsent(v.string()) }),
});
const MODELLED_PART_TYPES = ["text", "image_url"];
const ModelledPart = v.variant("type", [TextPart, ImagePart]);
/** input_audio, file, an assistant's refusal...: sent as they are to an openai upstream. */
const OtherPart = otherTypedObject(MODELLED_PART_TYPES);
const ContentParts = v.array(v.variant("type", [ModelledPart, OtherPart], "a content part needs a 'type'"));

/** A content part of a type the canonical form carries. */
export type ModelledPart = v.InferOutput<typeof ModelledPart>;
/** Whether `part` is one of the types the canonical form carries (else it was accepted as another). */
export const isModelledPart = (part: { type: string }): part is ModelledPart => MODELLED_PART_TYPES.includes(part.type);

const FunctionToolCall = v.object({
  id: v.string(),
  type: v.literal("function"),
  function: v.object({ name: v.string(), arguments: v.string() }),
});
/** A call of a custom tool (free-form input), which only OpenAI defines: sent as it is to an openai upstream. */
const CustomToolCall = v.looseObject({ id: v.string(), type: v.literal("custom"), custom: v.looseObject({ name: v.string(), input: v.string() }) });
const ToolCall = v.variant("type", [FunctionToolCall, CustomToolCall], "a tool call's type must be 'function' or 'custom'");

/** Roles of spec 2.1, plus `developer`, which current OpenAI SDKs send in place of `system`. */
const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

const Message = v.pipe(
  v.looseObject({
    role: v.picklist(ROLES, "must be one of system, user, assistant, tool"),
    content: v.optional(v.nullable(v.union([v.string(), ContentParts], "must be a string or an array of content parts"))),
    name: nullAsAbsent(v.string()),
    tool_calls: nullAsAbsent(v.array(ToolCall)),
    tool_call_id: nullAsAbsent(v.string()),
  }),
  v.check((m) => m.role !== "tool" || typeof m.tool_call_id === "string", "a tool message needs 'tool_call_id'"),
  v.check(
    (m) => (m.content !== undefined && m.content !== null) || (m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0),
    "'content' is required",
  ),
);

/** A function's name as OpenAI allows it (chat completions and the Responses API alike). */
export const ToolNameSchema = v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, "tool name must be 1-64 letters, digits, '_' or '-'"));

/** The fields of an OpenAI json_schema format: chat's `response_format.json_schema`, the Responses API's `text.format`. */
export const JSON_SCHEMA_FORMAT = {
  name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, "name must be 1-64 letters, digits, '_' or '-'")),
  description: v.optional(v.string()),
  schema: v.optional(JsonObjectSchema),
  strict: v.optional(v.nullable(v.boolean())),
};

const FunctionTool = v.object({
  type: v.literal("function"),
  function: v.object({
    name: ToolNameSchema,
    description: nullAsAbsent(v.string()),
    parameters: nullAsAbsent(JsonObjectSchema),
    strict: v.optional(v.nullable(v.boolean())),
  }),
});

/** A tool whose input is free text (optionally held to a grammar), which only OpenAI defines: sent as it is to an openai upstream. */
const CustomTool = v.looseObject({ type: v.literal("custom"), custom: v.looseObject({ name: ToolNameSchema }) });
const Tool = v.variant("type", [FunctionTool, CustomTool], "tool type must be 'function' or 'custom'");

/** Whether `tool` is a function tool, the kind every format has. */
export const isFunctionTool = (tool: { type: string }): tool is v.InferOutput<typeof FunctionTool> => tool.type === "function";
/** Whether `call` calls a function tool. */
export const isFunctionToolCall = (call: { type: string }): call is v.InferOutput<typeof FunctionToolCall> => call.type === "function";

/** The tools a call may use, out of all those defined (which stay the same from turn to turn, for prompt caching). */
const AllowedTools = v.object({
  type: v.literal("allowed_tools"),
  allowed_tools: v.object({
    mode: v.picklist(["auto", "required"], "must be 'auto' or 'required'"),
    tools: v.array(v.looseObject({ type: v.string(), function: v.optional(v.looseObject({ name: v.string() })) })),
  }),
});

const ToolChoice = v.union(
  [
    v.picklist(["auto", "none", "required"]),
    v.object({ type: v.literal("function"), function: v.object({ name: v.string() }) }),
    v.object({ type: v.literal("custom"), custom: v.object({ name: v.string() }) }),
    AllowedTools,
  ],
  "must be 'auto', 'none', 'required', {type:'function', function:{name}}, {type:'custom', custom:{name}} or {type:'allowed_tools', allowed_tools:{mode, tools}}",
);

/**
 * How hard a reasoning model thinks (chat's reasoning_effort, the Responses API's
 * reasoning.effort): every string is taken, so a value OpenAI adds later reaches an openai upstream;
 * the values known (translate/reasoning.ts) reach the other kinds.
 */
export const ReasoningEffortSchema = v.string("must be a string");

const ResponseFormat = v.variant(
  "type",
  [
    v.looseObject({ type: v.literal("text") }),
    v.looseObject({ type: v.literal("json_object") }),
    v.looseObject({ type: v.literal("json_schema"), json_schema: v.looseObject(JSON_SCHEMA_FORMAT) }),
  ],
  "must have type 'text', 'json_object' or 'json_schema'",
);

/**
 * POST /v1/chat/completions, validated as spec 4.1. Unknown fields are kept (loose) so a
 * same-format upstream receives them; known fields are checked strictly.
 */
export const ChatCompletionRequestSchema = v.looseObject({
  model: ModelIdSchema,
  messages: v.pipe(v.array(Message, "must be an array of messages"), v.minLength(1, "must contain at least one message")),
  temperature: v.optional(v.nullable(numberInRange(0, 2))),
  top_p: v.optional(v.nullable(numberInRange(0, 1))),
  max_tokens: v.optional(v.nullable(integerAtLeast(1))),
  max_completion_tokens: v.optional(v.nullable(integerAtLeast(1))),
  frequency_penalty: v.optional(v.nullable(numberInRange(-2, 2))),
  presence_penalty: v.optional(v.nullable(numberInRange(-2, 2))),
  stream: v.optional(v.nullable(v.boolean("must be a boolean"))),
  // Loose: include_obfuscation and later options reach an openai upstream.
  stream_options: v.optional(v.nullable(objectOnly(v.looseObject({ include_usage: v.optional(v.boolean()) })))),
  stop: v.optional(
    v.nullable(
      v.union(
        [v.string(), v.pipe(v.array(v.string()), v.maxLength(4, "at most 4 stop sequences"))],
        "must be a string or an array of at most 4 strings",
      ),
    ),
  ),
  tools: nullAsAbsent(v.array(Tool)),
  tool_choice: nullAsAbsent(ToolChoice),
  parallel_tool_calls: v.optional(v.nullable(v.boolean("must be a boolean"))),
  response_format: v.optional(v.nullable(ResponseFormat)),
  /** How many answers: more than one only an openai upstream gives. 128 is OpenAI's own bound. */
  n: v.optional(v.nullable(integerInRange(1, 128))),
  seed: v.optional(v.nullable(v.pipe(v.number(), v.integer()))),
  reasoning_effort: v.optional(v.nullable(ReasoningEffortSchema)),
  user: nullAsAbsent(v.string()),
  /** OpenAI's newer name for an end-user id, meant for abuse detection alone. */
  safety_identifier: v.optional(v.nullable(v.string())),
});

export type ChatCompletionRequest = v.InferOutput<typeof ChatCompletionRequestSchema>;
