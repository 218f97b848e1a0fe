import type { ChatMessage } from "./chat.ts";

/**
 * The assistant turn whose tool calls the request's last turns answer, or undefined: the last
 * assistant message, when it called tools and the messages after it hold tool results. Those
 * messages, with a user's words beside the results, make one user turn in Anthropic's format,
 * which wants the calling turn back with its signed thinking first whenever that turn answers it.
 */
export function answeredToolCallTurn(messages: readonly ChatMessage[]): ChatMessage | undefined {
  let answers = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant") return answers && message.parts.some((part) => part.type === "tool_call") ? message : undefined;
    answers ||= message.parts.some((part) => part.type === "tool_result");
  }
  return undefined;
}

/** The id of a turn's first tool call, under which its thinking is kept. */
export function firstToolCallId(parts: readonly { type: string; id?: string }[]): string | undefined {
  for (const part of parts) if (part.type === "tool_call") return part.id;
  return undefined;
}
