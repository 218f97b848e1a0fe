import type { ChatMessage, ChatRequest, ContentPart, ToolChoice } from "../../canonical/chat.ts";
import type { MessagesRequest } from "./request-schema.ts";

type Block = Exclude<MessagesRequest["messages"][number]["content"], string>[number];

/** An Anthropic image source as a URL (base64 data becomes a data: URL). */
function imageUrlOf(source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string }): string {
  return source.type === "url" ? source.url : `data:${source.media_type};base64,${source.data}`;
}

function partOf(block: Block): ContentPart {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", url: imageUrlOf(block.source) };
    case "tool_use":
      return { type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input) };
    case "tool_result": {
      const content = typeof block.content === "string" ? block.content : (block.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
      return { type: "tool_result", toolCallId: block.tool_use_id, content, ...(block.is_error ? { isError: true } : {}) };
    }
  }
}

/**
 * Anthropic messages in canonical form. Tool results, which Anthropic carries inside a user
 * message, become `tool` messages of their own so every upstream sees them in order.
 */
function messagesOf(body: MessagesRequest): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.system !== undefined) {
    const text = typeof body.system === "string" ? body.system : body.system.map((b) => b.text).join("\n");
    out.push({ role: "system", parts: [{ type: "text", text }] });
  }
  for (const message of body.messages) {
    if (typeof message.content === "string") {
      out.push({ role: message.role, parts: [{ type: "text", text: message.content }] });
      continue;
    }
    const parts = message.content.map(partOf);
    const results = parts.filter((p) => p.type === "tool_result");
    const rest = parts.filter((p) => p.type !== "tool_result");
    if (results.length > 0) out.push({ role: "tool", parts: results });
    if (rest.length > 0 || results.length === 0) out.push({ role: message.role, parts: rest });
  }
  return out;
}

function toolChoiceOf(choice: MessagesRequest["tool_choice"]): ToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === "tool") return { name: choice.name };
  return choice.type === "any" ? "required" : choice.type;
}

/** A validated messages body in the canonical form. */
export function convertAnthropicRequestToCanonical(body: MessagesRequest): ChatRequest {
  return {
    model: body.model,
    messages: messagesOf(body),
    params: {
      maxTokens: body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      topK: body.top_k,
      stop: body.stop_sequences,
    },
    tools: body.tools?.map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema })),
    toolChoice: toolChoiceOf(body.tool_choice),
    stream: body.stream === true,
  };
}
