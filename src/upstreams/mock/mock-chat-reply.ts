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

/** A minimal argument object satisfying the tool's JSON schema's required properties. */
function argumentsFor(tool: ToolDefinition): string {
  const properties = (tool.parameters.properties ?? {}) as Record<string, { type?: string }>;
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) {
    const type = properties[name]?.type;
    args[name] = type === "number" || type === "integer" ? 1 : type === "boolean" ? true : type === "array" ? [] : type === "object" ? {} : "mock";
  }
  return JSON.stringify(args);
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
    const args = argumentsFor(tool);
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
