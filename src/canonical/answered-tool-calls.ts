import type { ChatMessage } from "./chat.ts";

/**
 * The assistant turn whose tool calls the request's last turns answer, or undefined: the last
 * assistant message, when it called tools and every message after it holds tool results. It
 * is the turn a thinking Anthropic model wants back with its signed thinking first.
 */
export function answeredToolCallTurn(messages: readonly ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      const answered = i < messages.length - 1 && message.parts.some((part) => part.type === "tool_call");
      return answered ? message : undefined;
    }
    if (!message.parts.some((part) => part.type === "tool_result")) return undefined;
  }
  return undefined;
}

/** The id of a turn's first tool call, under which its thinking is kept. */
export function firstToolCallId(parts: readonly { type: string; id?: string }[]): string | undefined {
  for (const part of parts) if (part.type === "tool_call") return part.id;
  return undefined;
}
