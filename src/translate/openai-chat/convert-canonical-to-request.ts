import type { ChatMessage, ChatRequest, ToolDefinition } from "../../canonical/chat.ts";
import type { UpstreamWarnings } from "../../upstreams/warnings.ts";
import { everySchema, isObjectType, isSchema, type Schema } from "../json-schema-walk.ts";
import { effortOf } from "../reasoning.ts";
import { isOpenAiReasoningModel, tokenLimitField } from "./reasoning-model.ts";
import { firstStopSequences } from "../stop-sequences.ts";

/** The most stop sequences OpenAI's chat completions take (a 400 past it); Anthropic callers may send more. */
const OPENAI_MAX_STOP_SEQUENCES = 4;

/** A canonical message as one or more OpenAI messages (each tool result is its own message). */
function messagesOf(message: ChatMessage): Record<string, unknown>[] {
  if (message.role === "tool" || message.parts.some((p) => p.type === "tool_result")) {
    return message.parts
      .filter((p) => p.type === "tool_result")
      .map((p) => ({ role: "tool", tool_call_id: p.toolCallId, content: p.content }));
  }
  const toolCalls = message.parts
    .filter((p) => p.type === "tool_call")
    .map((p) => ({ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments } }));
  const media = message.parts.filter((p) => p.type === "text" || p.type === "image");
  const onlyText = media.every((p) => p.type === "text");
  const content = onlyText
    ? media.map((p) => (p.type === "text" ? p.text : "")).join("")
    : media.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: p.url } }));
  const out: Record<string, unknown> = { role: message.role, content: toolCalls.length > 0 && content === "" ? null : content };
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  return [out];
}

/**
 * Whether OpenAI's strict mode takes a schema: it holds an answer only to schemas whose every
 * object is closed (`additionalProperties: false`) and requires all its properties. Anthropic's
 * structured outputs also take optional properties; such a schema sent strict is a 400.
 */
function fitsStrictMode(schema: Schema): boolean {
  return everySchema(schema, (node) => {
    if (!isObjectType(node)) return true;
    const required = Array.isArray(node.required) ? node.required : [];
    return node.additionalProperties === false && Object.keys(isSchema(node.properties) ? node.properties : {}).every((name) => required.includes(name));
  });
}

/**
 * Whether a schema asked to hold the answer (`strict`) is sent strict: when it fits OpenAI's
 * strict mode. One that does not is sent as guidance, and `warnings` say so under `field`.
 */
function strictFor(strict: boolean | undefined, schema: Schema, field: string, warnings: UpstreamWarnings): boolean | undefined {
  if (!strict || fitsStrictMode(schema)) return strict;
  warnings.add(field, "not held to the schema: the upstream holds answers only to schemas whose objects are closed and require every property");
  return undefined;
}

/** A canonical tool as an OpenAI function tool, its arguments held to the schema (strict) when the caller asked and the schema allows. */
function toolOf(tool: ToolDefinition, warnings: UpstreamWarnings): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: tool.name, description: tool.description, parameters: tool.parameters };
  if (strictFor(tool.strict, tool.parameters, `strict (tool ${tool.name})`, warnings)) fn.strict = true;
  return { type: "function", function: fn };
}

/** A canonical request as an OpenAI chat-completions body for `upstreamModel`. */
export function convertCanonicalToOpenAiChatRequest(request: ChatRequest, upstreamModel: string, warnings: UpstreamWarnings): Record<string, unknown> {
  const p = request.params;
  const body: Record<string, unknown> = {
    model: upstreamModel,
    messages: request.messages.flatMap(messagesOf),
  };
  // A reasoning model refuses any temperature but 1, and top_p: Variant A's defaults of them,
  // which the caller never asked for, are withheld from one.
  const withheld = (name: "temperature" | "topP") => request.defaulted?.includes(name) === true && isOpenAiReasoningModel(upstreamModel);
  if (p.temperature !== undefined && !withheld("temperature")) body.temperature = p.temperature;
  if (p.topP !== undefined && !withheld("topP")) body.top_p = p.topP;
  if (p.maxTokens !== undefined) body[tokenLimitField(upstreamModel)] = p.maxTokens;
  // OpenAI's reasoning models refuse `stop` (400 "Unsupported parameter"): another format's sequences are not sent to one.
  if (p.stop !== undefined && isOpenAiReasoningModel(upstreamModel)) warnings.add("stop", "not supported by the upstream model; the answer does not stop there");
  else if (p.stop !== undefined) body.stop = firstStopSequences(p.stop, OPENAI_MAX_STOP_SEQUENCES, warnings);
  if (p.frequencyPenalty !== undefined) body.frequency_penalty = p.frequencyPenalty;
  if (p.presencePenalty !== undefined) body.presence_penalty = p.presencePenalty;
  if (p.seed !== undefined) body.seed = p.seed;
  if (p.topK !== undefined) warnings.add("top_k", "not supported by the upstream; ignored");
  if (request.messages.some((m) => m.parts.some((part) => part.type === "tool_result" && part.isError))) {
    warnings.add("is_error", "not supported by the upstream: a failed tool call's result is sent as its plain content");
  }
  if (request.tools) {
    body.tools = request.tools.map((tool) => toolOf(tool, warnings));
  }
  if (request.toolChoice !== undefined) {
    body.tool_choice =
      typeof request.toolChoice === "string" ? request.toolChoice : { type: "function", function: { name: request.toolChoice.name } };
  }
  // OpenAI refuses parallel_tool_calls in a request without tools.
  if (request.parallelToolCalls !== undefined && request.tools) body.parallel_tool_calls = request.parallelToolCalls;
  const format = request.responseFormat;
  if (format?.type === "json") body.response_format = { type: "json_object" };
  else if (format?.type === "json_schema") {
    const strict = strictFor(format.strict, format.schema, "strict (response schema)", warnings);
    body.response_format = { type: "json_schema", json_schema: { name: format.name ?? "response", schema: format.schema, ...(strict !== undefined ? { strict } : {}) } };
  }
  const effort = request.reasoning && effortOf(request.reasoning);
  // xhigh is OpenAI's most.
  if (effort) body.reasoning_effort = effort === "max" ? "xhigh" : effort;
  // OpenAI's end-user id field; `safety_identifier`, its newer name, is unknown to many compatible servers.
  if (request.endUser) body.user = request.endUser.id;
  if (request.stream) {
    body.stream = true;
    // Always asked for: billing settles from the usage the upstream reports.
    body.stream_options = { include_usage: true };
  }
  return body;
}
