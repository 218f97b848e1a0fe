import type { ChatMessage, ChatRequest, ContentPart, NativeRequest, ResponseFormat, ToolChoice, ToolDefinition, Untranslated } from "../../canonical/chat.ts";
import { isCustomTool, isModelledBlock, type AnthropicPrompt, type MessagesRequest, type ServerTool } from "./request-schema.ts";
import { nothingUntranslated } from "../untranslated.ts";
import { anthropicEffort } from "../reasoning.ts";

type Block = Exclude<AnthropicPrompt["messages"][number]["content"], string>[number];
type Tool = NonNullable<AnthropicPrompt["tools"]>[number];

/** Blocks that record the model's own earlier reasoning: only Anthropic can use them again. */
const REPLAY_BLOCKS = new Set(["thinking", "redacted_thinking"]);

/** An Anthropic image source as a URL (base64 data becomes a data: URL). */
function imageUrlOf(source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string }): string {
  return source.type === "url" ? source.url : `data:${source.media_type};base64,${source.data}`;
}

type ToolResultContent = Extract<Block, { type: "tool_result" }>["content"];

/**
 * A tool result's text. The canonical form carries a result as text, and OpenAI's tool
 * messages take nothing else: an image or a document a tool returned (a screenshot) is
 * noted in `untranslated`, so the model is not asked about a picture it was never shown.
 */
function toolResultText(content: ToolResultContent, where: string, untranslated: Untranslated): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const [k, block] of (content ?? []).entries()) {
    if (block.type === "text") text += block.text;
    else untranslated.input.push(`${where}.content[${k}] (${block.type})`);
  }
  return text;
}

/** A block in canonical form, or null for one the canonical form does not carry (noted in `untranslated`). */
function partOf(block: Block, where: string, untranslated: Untranslated): ContentPart | null {
  if (!isModelledBlock(block)) {
    (REPLAY_BLOCKS.has(block.type) ? untranslated.replay : untranslated.input).push(`${where} (${block.type})`);
    return null;
  }
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      if (block.source.type === "file") {
        untranslated.input.push(`${where} (an image from Anthropic's Files API)`);
        return null;
      }
      return { type: "image", url: imageUrlOf(block.source) };
    case "tool_use":
      return { type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input) };
    case "tool_result":
      return { type: "tool_result", toolCallId: block.tool_use_id, content: toolResultText(block.content, where, untranslated), ...(block.is_error ? { isError: true } : {}) };
  }
}

/**
 * Anthropic messages in canonical form. Tool results, which Anthropic carries inside a user
 * message, become `tool` messages of their own so every upstream sees them in order.
 */
function messagesOf(body: AnthropicPrompt, untranslated: Untranslated): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.system !== undefined) {
    const text = typeof body.system === "string" ? body.system : body.system.map((b) => b.text).join("\n");
    out.push({ role: "system", parts: [{ type: "text", text }] });
  }
  for (const [i, message] of body.messages.entries()) {
    if (typeof message.content === "string") {
      out.push({ role: message.role, parts: [{ type: "text", text: message.content }] });
      continue;
    }
    const parts = message.content.map((block, j) => partOf(block, `messages[${i}].content[${j}]`, untranslated)).filter((p) => p !== null);
    const results = parts.filter((p) => p.type === "tool_result");
    const rest = parts.filter((p) => p.type !== "tool_result");
    if (results.length > 0) out.push({ role: "tool", parts: results });
    if (rest.length > 0 || results.length === 0) out.push({ role: message.role, parts: rest });
  }
  return out;
}

function toolChoiceOf(choice: AnthropicPrompt["tool_choice"]): ToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === "tool") return { name: choice.name };
  return choice.type === "any" ? "required" : choice.type;
}

/** False when the caller's tool_choice allows at most one tool call per turn. */
function parallelToolCallsOf(choice: AnthropicPrompt["tool_choice"]): boolean | undefined {
  const disabled = choice !== undefined && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true;
  return disabled ? false : undefined;
}

/** The tools the caller defines, in canonical form; Anthropic's server tools are noted in `untranslated`. */
function toolsOf(tools: Tool[], untranslated: Untranslated): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const [i, tool] of tools.entries()) {
    if (!isCustomTool(tool)) {
      untranslated.input.push(`tools[${i}] (${tool.type})`);
      continue;
    }
    const definition: ToolDefinition = { name: tool.name, description: tool.description, parameters: tool.input_schema };
    if (tool.strict === true) definition.strict = true;
    out.push(definition);
  }
  return out;
}

/** Anthropic's web search tool, by its versioned type (web_search_20250305...). */
const isWebSearch = (tool: Tool): tool is ServerTool => !isCustomTool(tool) && tool.type.startsWith("web_search_");

/** The web searches the body lets Anthropic run, which it bills apiece: `maxUses` only when every web search tool names one. */
function webSearchOf(tools: Tool[] | undefined): NativeRequest["webSearch"] {
  const searches = (tools ?? []).filter(isWebSearch);
  if (searches.length === 0) return undefined;
  let maxUses = 0;
  for (const tool of searches) {
    if (tool.max_uses === undefined) return {};
    maxUses += tool.max_uses;
  }
  return { maxUses };
}

/**
 * The answer's JSON Schema (output_config.format). Anthropic holds every answer to it by
 * constrained decoding, so it is strict: another upstream is asked to hold the answer to it too.
 */
function responseFormatOf(config: AnthropicPrompt["output_config"]): ResponseFormat | undefined {
  const format = config?.format;
  return format ? { type: "json_schema", schema: format.schema, strict: true } : undefined;
}

/**
 * The thinking asked for: a budget (with its effort, when given too), off, or adaptive (an
 * effort, or the model's choice). Effort alone, without thinking, still says how much the
 * model is to spend. The caller sees thinking blocks when it turned thinking on.
 */
function reasoningOf(body: MessagesRequest): Pick<ChatRequest, "reasoning" | "showReasoning"> {
  const effort = anthropicEffort(body.output_config?.effort);
  const thinking = body.thinking;
  const withEffort = effort === undefined ? {} : { effort };
  if (thinking?.type === "disabled") return { reasoning: { effort: "none" }, showReasoning: false };
  // The schema holds an `enabled` thinking to a budget; the check narrows its type.
  if (thinking?.type === "enabled" && typeof thinking.budget_tokens === "number") {
    return { reasoning: { budgetTokens: thinking.budget_tokens, ...withEffort }, showReasoning: true };
  }
  if (thinking?.type === "adaptive") return { reasoning: withEffort, showReasoning: true };
  return { ...(effort === undefined ? {} : { reasoning: withEffort }), showReasoning: false };
}

/**
 * A validated prompt (a count_tokens body) in the canonical form, without sampling parameters
 * and not streamed, the body itself kept for an anthropic upstream.
 */
export function convertAnthropicPromptToCanonical(body: AnthropicPrompt): ChatRequest {
  const untranslated = nothingUntranslated();
  const messages = messagesOf(body, untranslated);
  const tools = body.tools && toolsOf(body.tools, untranslated);
  const webSearch = webSearchOf(body.tools);
  return {
    model: body.model,
    native: { format: "anthropic", body, untranslated, ...(webSearch ? { webSearch } : {}) },
    messages,
    params: {},
    tools: tools && tools.length > 0 ? tools : undefined,
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: parallelToolCallsOf(body.tool_choice),
    responseFormat: responseFormatOf(body.output_config),
    showReasoning: false,
    stream: false,
  };
}

/** A validated messages body in the canonical form, the body itself kept for an anthropic upstream. */
export function convertAnthropicRequestToCanonical(body: MessagesRequest): ChatRequest {
  const request = convertAnthropicPromptToCanonical(body);
  // A final assistant message is the start of the answer, which Anthropic continues.
  if (body.messages.at(-1)!.role === "assistant") request.native!.untranslated!.prefill = `messages[${body.messages.length - 1}]`;
  request.params = { maxTokens: body.max_tokens, temperature: body.temperature, topP: body.top_p, topK: body.top_k, stop: body.stop_sequences };
  const userId = body.metadata?.user_id;
  if (typeof userId === "string") request.endUser = { id: userId, field: "metadata.user_id" };
  request.stream = body.stream === true;
  return { ...request, ...reasoningOf(body) };
}
