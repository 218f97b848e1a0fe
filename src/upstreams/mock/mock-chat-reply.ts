import type { ChatRequest, ContentPart, FinishReason, ToolDefinition } from "../../canonical/chat.ts";
import { textOf } from "../../canonical/chat.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { estimatePromptTokens } from "../../canonical/estimate-prompt-tokens.ts";

/** What the mock model answers: deterministic in the request, so demos and tests can rely on it. */
export interface MockReply {
  content: ContentPart[];
  finishReason: FinishReason;
  /** The stop sequence the echo was cut at. */
  stopSequence?: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * The smallest value `schema` takes: an object of its required properties, each sampled in
 * turn, the first of an enum, const or choice, 1, true, [] or "mock". What the demo model
 * calls tools with and answers a JSON schema with, so a caller's parser accepts it.
 */
function sampleOf(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object") return "mock";
  const node = schema as Record<string, unknown>;
  if ("const" in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  const choices = node.anyOf ?? node.oneOf;
  if (Array.isArray(choices) && choices.length > 0) return sampleOf(choices[0]);
  // Gemini's schemas write their types in capitals.
  const type = String((Array.isArray(node.type) ? node.type[0] : node.type) ?? (node.properties ? "object" : "string")).toLowerCase();
  if (type === "number" || type === "integer") return 1;
  if (type === "boolean") return true;
  if (type === "array") return [];
  if (type === "null") return null;
  if (type !== "object") return "mock";
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const required: string[] = Array.isArray(node.required) ? node.required : [];
  return Object.fromEntries(required.map((name) => [name, sampleOf(properties[name])]));
}

/** The tool the mock calls: the named one, or with `required`/`auto` the first one, unless a tool result was just given. */
function toolToCall(request: ChatRequest): ToolDefinition | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0 || request.toolChoice === "none") return undefined;
  const last = request.messages.at(-1);
  if (last?.role === "tool" || last?.parts.some((p) => p.type === "tool_result")) return undefined;
  if (typeof request.toolChoice === "object") {
    const name = request.toolChoice.name;
    return tools.find((t) => t.name === name);
  }
  return tools[0];
}

/**
 * The id of the mock's next call: numbered after the calls the history holds, so each call of
 * a conversation has its own (callers pair results with calls by id), and the same history
 * still gets the same answer.
 */
function callIdOf(request: ChatRequest, tool: ToolDefinition): string {
  let calls = 0;
  for (const message of request.messages) for (const part of message.parts) if (part.type === "tool_call") calls++;
  return `call_mock_${tool.name}_${calls + 1}`;
}

/** The mock model's answer to a request. */
export function mockChatReply(request: ChatRequest): MockReply {
  const inputTokens = estimatePromptTokens(request);
  const tool = toolToCall(request);
  if (tool) {
    const args = JSON.stringify(sampleOf(tool.parameters));
    return {
      content: [{ type: "tool_call", id: callIdOf(request, tool), name: tool.name, arguments: args }],
      finishReason: "tool_calls",
      inputTokens,
      outputTokens: estimateTokens(tool.name + args),
    };
  }
  const lastUser = [...request.messages].reverse().find((m) => m.role === "user" || m.role === "tool");
  const said = lastUser ? textOf(lastUser.parts) || lastUser.parts.map((p) => (p.type === "tool_result" ? p.content : "")).join("") : "";
  const full = `This is a mock reply from the gateway. You said: ${said.slice(0, 200) || "(nothing)"}`;
  const format = request.responseFormat;
  if (format) {
    // JSON is answered whole: cut at a word or a stop sequence it would no longer parse.
    const json = JSON.stringify(format.type === "json_schema" ? sampleOf(format.schema) : { reply: full });
    return { content: [{ type: "text", text: json }], finishReason: "stop", inputTokens, outputTokens: estimateTokens(json) };
  }
  const words = full.split(" ");
  const limit = request.params.maxTokens;
  const kept = limit !== undefined && limit < words.length ? words.slice(0, limit) : words;
  const text = kept.join(" ");
  const usage = { inputTokens, outputTokens: kept.length };
  const stopped = firstStop(text, request.params.stop);
  if (!stopped) return { content: [{ type: "text", text }], finishReason: kept.length < words.length ? "length" : "stop", ...usage };
  return { content: [{ type: "text", text: text.slice(0, stopped.at) }], finishReason: "stop", stopSequence: stopped.sequence, ...usage };
}

/** The stop sequence that writing `text` would meet first (the one whose match ends first), and where its match starts. */
function firstStop(text: string, stops: readonly string[] = []): { sequence: string; at: number } | undefined {
  let first: { sequence: string; at: number } | undefined;
  for (const sequence of stops) {
    const at = sequence === "" ? -1 : text.indexOf(sequence);
    if (at !== -1 && (!first || at + sequence.length < first.at + first.sequence.length)) first = { sequence, at };
  }
  return first;
}
