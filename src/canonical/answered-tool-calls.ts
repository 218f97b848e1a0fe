import type { ChatMessage } from "./chat.ts";

const answersCalls = (message: ChatMessage) => message.parts.some((part) => part.type === "tool_result");

/**
 * The assistant messages that called tools in the tool loop the request's last turns
 * continue, oldest first, or undefined when those turns answer no tool call. A loop is one
 * assistant turn in Anthropic's terms: every assistant message since the last user turn that
 * answered no tool call (a user's words beside tool results make one turn with them, which
 * still answers). Anthropic,
 * thinking, wants the loop's first message back with its signed thinking first, and refuses
 * the request otherwise; the model thinks again within a loop only with interleaved thinking,
 * and then wants each later message's thinking back where it was made, as none may be left
 * out or moved. Messages of earlier turns need none: Anthropic sets their thinking aside.
 */
export function answeredToolLoop(messages: readonly ChatMessage[]): ChatMessage[] | undefined {
  let loop: ChatMessage[] | undefined;
  // Read backwards: whether the user turn read last answers calls, and whether an assistant message came since.
  let answers = false;
  let assistantSince = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "system") continue;
    if (message.role === "assistant") {
      if (!answers) break;
      if (firstToolCallId(message.parts) !== undefined) (loop ??= []).push(message);
      assistantSince = true;
    } else {
      if (assistantSince) answers = assistantSince = false;
      answers ||= answersCalls(message);
    }
  }
  return loop?.reverse();
}

/** The id of a turn's first tool call, under which its thinking is kept. */
export function firstToolCallId(parts: readonly { type: string; id?: string }[]): string | undefined {
  for (const part of parts) if (part.type === "tool_call") return part.id;
  return undefined;
}
