import type { ChatMessage } from "../canonical/chat.ts";
import type { UpstreamWarnings } from "../upstreams/warnings.ts";

/**
 * The text of the system messages, joined, for a format that takes one system prompt apart
 * from the turns (Anthropic's `system`, Gemini's `systemInstruction`). A system message after
 * the conversation began, which only OpenAI allows, loses its place there, so the warnings
 * name it: by its index, which is the OpenAI caller's own (its messages map one to one).
 */
export function joinSystemPrompt(messages: readonly ChatMessage[], warnings: UpstreamWarnings): string | undefined {
  const texts: string[] = [];
  let begun = false;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "system") {
      begun = true;
      continue;
    }
    if (begun) warnings.add(`messages[${i}]`, "a system message after the conversation began, moved to the top: the upstream takes one system prompt");
    for (const part of message.parts) if (part.type === "text") texts.push(part.text);
  }
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}
