import * as v from "valibot";
import { integerAtLeast, integerInRange, numberInRange } from "../../lib/validate.ts";
import { JsonObjectSchema, ModelIdSchema, objectOnly, otherTypedObject, nullAsAbsent } from "../../lib/schemas.ts";
import { JSON_SCHEMA_FORMAT, ReasoningEffortSchema, ToolNameSchema } from "../openai-chat/request-schema.ts";

/**
 * An object of any `type` but `served`, refused with `why(type)`: no upstream speaks the
 * Responses API, so what the canonical form cannot carry cannot be served at all, and the
 * 400 names the item and its type rather than listing the types that are.
 */
function refusedType(served: readonly string[], why: (type: string) => string) {
  return v.pipe(
    otherTypedObject(served),
    v.check(() => false, (issue) => why((issue.input as { type: string }).type)),
    // Never reached: typed so, so that a served type's fields are known wherever its `type` is.
    v.transform((refused) => refused as never),
  );
}

/** A field that asks for state the gateway does not keep: refused whenever it is set. */
function refusedField(why: string) {
  return v.optional(v.nullable(v.custom<never>(() => false, why)));
}

const InputText = v.object({ type: v.literal("input_text"), text: v.string() });
/** An earlier answer's text, as the SDK sends `response.output` back. */
const OutputText = v.object({ type: v.literal("output_text"), text: v.string() });
const InputImage = v.pipe(
  v.object({
    type: v.literal("input_image"),
    image_url: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1)))),
    file_id: refusedField("files are not kept by the gateway: send the image as 'image_url' (an http(s) or data: URL)"),
    detail: v.optional(v.nullable(v.string())),
  }),
  v.check((part) => typeof part.image_url === "string", "an input_image needs 'image_url' (an http(s) or data: URL)"),
);
const Refusal = v.object({ type: v.literal("refusal"), refusal: v.string() });
const CONTENT_TYPES = ["input_text", "output_text", "input_image", "refusal"];
const OtherContent = refusedType(CONTENT_TYPES, (type) =>
  type === "input_file"
    ? "input_file parts are not served: the gateway keeps no files and the chat form it translates to has no documents"
    : `content parts of type '${type}' are not served; the gateway takes input_text, output_text, input_image and refusal`,
);
const Content = v.array(v.variant("type", [InputText, OutputText, InputImage, Refusal, OtherContent], "a content part needs a 'type'"));

const MessageItem = v.object({
  type: v.optional(v.literal("message")),
  role: v.picklist(["user", "assistant", "system", "developer"], "must be one of user, assistant, system, developer"),
  content: v.union([v.string(), Content], "must be a string or an array of content parts"),
});

const FunctionCallItem = v.object({
  type: v.literal("function_call"),
  call_id: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  name: v.string(),
  /** The namespace tool the function is in (see NamespaceTool). */
  namespace: v.optional(v.nullable(v.string())),
  arguments: v.string(),
});

const OutputContent = v.array(
  v.variant("type", [
    InputText,
    refusedType(["input_text"], (type) => `a function's output of type '${type}' is not served: the chat form it translates to takes text only`),
  ]),
);
const FunctionCallOutputItem = v.object({
  type: v.literal("function_call_output"),
  call_id: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  output: v.union([v.string(), OutputContent], "must be a string or an array of input_text parts"),
});

/** An earlier answer's reasoning, sent back with its output: the model's record of its own thinking, which no upstream takes back. */
const ReasoningItem = v.looseObject({ type: v.literal("reasoning") });

/** An earlier answer's output item named by its id, as the AI SDK sends its own earlier text back when it stores responses. */
const ItemReference = v.object({ type: v.literal("item_reference"), id: v.pipe(v.string(), v.minLength(1, "must not be empty")) });

/** The conversation before it, compacted by POST /v1/responses/compact into the summary its `encrypted_content` carries. */
const CompactionItem = v.object({
  type: v.literal("compaction"),
  encrypted_content: v.string(),
  id: v.optional(v.nullable(v.string())),
});

const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning", "item_reference", "compaction"];
/** Where a compaction_trigger is served: taken off a /v1/responses body before this schema sees it (see compactionTriggerTakenOff). */
const TRIGGER_PLACE = "a compaction_trigger item is served only as the last item of input on /v1/responses, where it asks for the conversation before it to be compacted";
const OtherItem = refusedType(ITEM_TYPES, (type) =>
  type === "compaction_trigger"
    ? TRIGGER_PLACE
    : `items of type '${type}' are not served; the gateway takes message, function_call, function_call_output, reasoning, item_reference and compaction items`,
);
const InputItem = v.variant(
  "type",
  [MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem, ItemReference, CompactionItem, OtherItem],
  "an item's 'type' must be a string",
);

/** An item_reference of `input`, which names an item instead of holding it. */
export type ItemReference = v.InferOutput<typeof ItemReference>;
/** One item of `input` that holds what it says: every kind but an item_reference. */
export type InputItem = Exclude<v.InferOutput<typeof InputItem>, ItemReference>;
/** One content part of a message item. */
export type InputContent = v.InferOutput<typeof Content>[number];

const FunctionTool = v.object({
  type: v.literal("function"),
  name: ToolNameSchema,
  description: v.optional(v.nullable(v.string())),
  parameters: v.optional(v.nullable(JsonObjectSchema)),
  strict: v.optional(v.nullable(v.boolean())),
});
/** Function tools grouped under a name, which the model calls them within (Codex CLI's sub-agent tools). */
const NamespaceTool = v.object({
  type: v.literal("namespace"),
  name: ToolNameSchema,
  description: v.optional(v.nullable(v.string())),
  tools: v.array(
    v.variant("type", [FunctionTool, refusedType(["function"], (type) => `'${type}' tools are not served, in a namespace or out of one; only function tools are`)], "a tool needs a 'type'"),
  ),
});
/**
 * OpenAI's web search, which the gateway does not run. Unlike the other built-in tools it is
 * left out with a warning rather than refused: it is an aid the model answers without, and
 * Codex CLI offers it on every request. The dated names are OpenAI's own.
 */
export const WEB_SEARCH_TOOL_TYPES = ["web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"] as const;
const WebSearchTool = v.looseObject({ type: v.picklist(WEB_SEARCH_TOOL_TYPES) });
const BuiltInTool = refusedType(["function", "namespace", ...WEB_SEARCH_TOOL_TYPES], (type) => `'${type}' is a built-in tool of OpenAI's, which the gateway does not run; only function tools are served`);

const ToolChoice = v.union(
  [v.picklist(["auto", "none", "required"]), v.object({ type: v.literal("function"), name: v.string() })],
  "must be 'auto', 'none', 'required' or {type: 'function', name}",
);

const TextFormat = v.variant(
  "type",
  [
    v.object({ type: v.literal("text") }),
    v.object({ type: v.literal("json_object") }),
    v.object({ type: v.literal("json_schema"), ...JSON_SCHEMA_FORMAT }),
  ],
  "must have type 'text', 'json_object' or 'json_schema'",
);

/**
 * POST /v1/responses, OpenAI's Responses API. Every request is translated to the canonical
 * form, since no upstream is sent this format: what that form cannot carry and a model
 * would need (built-in tools, files, stored conversations) is refused with a 400 naming it.
 * Unknown fields are kept (loose), as the chat format keeps them, to be named in
 * x-gateway-warnings; known fields are checked strictly.
 */
export const ResponsesRequestSchema = v.looseObject({
  model: ModelIdSchema,
  input: v.union(
    [v.string(), v.pipe(v.array(InputItem), v.minLength(1, "must contain at least one item"))],
    "must be a string or an array of input items",
  ),
  instructions: v.optional(v.nullable(v.string())),
  tools: v.optional(v.nullable(v.array(v.variant("type", [FunctionTool, NamespaceTool, WebSearchTool, BuiltInTool], "a tool needs a 'type'")))),
  tool_choice: v.optional(v.nullable(ToolChoice)),
  parallel_tool_calls: v.optional(v.nullable(v.boolean("must be a boolean"))),
  max_output_tokens: v.optional(v.nullable(integerAtLeast(1))),
  temperature: v.optional(v.nullable(numberInRange(0, 2))),
  top_p: v.optional(v.nullable(numberInRange(0, 1))),
  text: v.optional(v.nullable(objectOnly(v.looseObject({ format: v.optional(v.nullable(TextFormat)) })))),
  stream: v.optional(v.nullable(v.boolean("must be a boolean"))),
  store: v.optional(v.nullable(v.boolean("must be a boolean"))),
  user: nullAsAbsent(v.string()),
  safety_identifier: v.optional(v.nullable(v.string())),
  metadata: v.optional(v.nullable(objectOnly(v.record(v.string(), v.string("metadata values must be strings"))))),
  top_logprobs: v.optional(v.nullable(integerInRange(0, 20))),
  reasoning: v.optional(
    v.nullable(
      objectOnly(
        v.looseObject({
          effort: v.optional(v.nullable(ReasoningEffortSchema)),
          summary: v.optional(v.nullable(v.picklist(["auto", "concise", "detailed"], "must be 'auto', 'concise' or 'detailed'"))),
        }),
      ),
    ),
  ),
  /** A Response of the caller's that this one continues: its conversation comes before `input`. */
  previous_response_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, "must not be empty")))),
  // OpenAI refuses it beside previous_response_id too, so refusing it always refuses the pair.
  conversation: refusedField("the gateway stores no conversations: continue a Response by 'previous_response_id', or send the whole conversation in 'input'"),
  prompt: refusedField("the gateway stores no prompt templates: send the prompt in 'instructions' and 'input'"),
  background: v.optional(v.nullable(v.pipe(v.boolean("must be a boolean"), v.check((b) => !b, "background responses are not served: the gateway stores no responses to poll")))),
});

export type ResponsesRequest = v.InferOutput<typeof ResponsesRequestSchema>;

/**
 * A /v1/responses body whose last input item, a compaction_trigger, was taken off: its input
 * may then be empty, when previous_response_id holds the conversation to compact.
 */
export const TriggeredRequestSchema = v.looseObject({ ...ResponsesRequestSchema.entries, input: v.array(InputItem, "must be an array of input items") });

/** A body whose item references were replaced by the items they name: what is translated. */
export type ResolvedResponsesRequest = { [K in keyof ResponsesRequest]: K extends "input" ? string | InputItem[] : ResponsesRequest[K] };

/**
 * POST /v1/responses/input_tokens: the prompt part of a Responses body. Sampling, output
 * length and streaming are not part of a prompt; a Response it continues is, and the stored
 * state the gateway does not keep is refused as on /v1/responses.
 */
export const InputTokensRequestSchema = v.pick(ResponsesRequestSchema, [
  "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "text", "previous_response_id", "conversation", "prompt",
]);

/**
 * POST /v1/responses/compact: a conversation to compact, given as a Responses body gives one.
 * It takes no tools and no sampling settings; the answer is never streamed.
 */
export const CompactRequestSchema = v.pick(ResponsesRequestSchema, ["model", "input", "instructions", "previous_response_id", "conversation", "prompt"]);
