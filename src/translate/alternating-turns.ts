import type { ChatMessage, ContentPart } from "../canonical/chat.ts";

/** A turn of a format whose turns alternate between the user and the model. */
export interface Turn<Part> {
  role: "user" | "assistant";
  parts: Part[];
}

/**
 * A text part with nothing in it but whitespace: OpenAI takes one (an assistant message of
 * content "" beside its tool calls, as many clients send), Anthropic refuses it (400 "text
 * content blocks must contain non-whitespace text") and Gemini an empty one (400 "required
 * oneof field 'data' must have one initialized field").
 */
const isBlankText = (part: ContentPart) => part.type === "text" && part.text.trim() === "";

/**
 * The conversation's turns (system messages already taken out) for a format whose turns
 * alternate (Anthropic's messages, Gemini's contents): tool messages are the user's, turns of
 * one role in a row are merged, blank text is left out, and a turn left with nothing is
 * dropped, since both refuse an empty one ("contents.parts must not be empty"). What is left
 * out said nothing, so the model is asked the same.
 */
export function alternatingTurns<Part>(messages: readonly ChatMessage[], partOf: (part: ContentPart) => Part): Turn<Part>[] {
  const turns: Turn<Part>[] = [];
  for (const message of messages) {
    const parts = message.parts.filter((part) => !isBlankText(part)).map(partOf);
    if (parts.length === 0) continue;
    const role = message.role === "assistant" ? "assistant" : "user";
    const previous = turns.at(-1);
    if (previous?.role === role) previous.parts.push(...parts);
    else turns.push({ role, parts });
  }
  return turns;
}
