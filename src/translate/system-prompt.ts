import type { ChatMessage, ChatRequest } from "../canonical/chat.ts";
import type { UpstreamWarnings } from "../upstreams/warnings.ts";
import { callerPlaceOfSystemMessage, conversationFieldOf } from "./caller-places.ts";

/**
 * The text of the system messages, joined, for a format that takes one system prompt apart
 * from the turns (Anthropic's `system`, Gemini's `systemInstruction`). A system message after
 * the conversation began, which OpenAI allows (and Anthropic's newer models, which get an
 * Anthropic caller's body as it is), loses its place there, so the warnings name it where the
 * caller put it.
 */
function joinSystemPrompt(request: ChatRequest, warnings: UpstreamWarnings): string | undefined {
  const messages = request.messages;
  const texts: string[] = [];
  let begun = false;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "system") {
      begun = true;
      continue;
    }
    if (begun) warnings.add(callerPlaceOfSystemMessage(request, i), "a system message after the conversation began, moved to the top: the upstream takes one system prompt");
    for (const part of message.parts) if (part.type === "text") texts.push(part.text);
  }
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

/**
 * The system prompt and the turns of `request`, for a format that takes one system prompt apart
 * and needs at least one turn (Anthropic's messages, Gemini's contents). A conversation of system
 * messages alone, which OpenAI serves (the model answers the instructions), was refused there
 * for want of a turn: its system text becomes the one user turn instead, and the warnings say so.
 */
export function systemAndTurns(request: ChatRequest, warnings: UpstreamWarnings): { system: string | undefined; turns: readonly ChatMessage[] } {
  const system = joinSystemPrompt(request, warnings);
  const turns = request.messages.filter((message) => message.role !== "system");
  if (turns.length > 0 || system === undefined) return { system, turns };
  warnings.add(conversationFieldOf(request), "system messages alone, sent as the one user turn: the upstream needs a turn");
  return { system: undefined, turns: [{ role: "user", parts: [{ type: "text", text: system }] }] };
}
