import { estimateTokens } from "../lib/estimate-tokens.ts";
import type { ChatRequest } from "./chat.ts";
import type { EmbeddingInput } from "./media.ts";

/**
 * The prompt's token estimate: its text, tool calls and tool results at about 4 characters
 * a token. The one estimate for holds, for streams without reported usage, and for the
 * mock model's own count, so a mock request costs exactly what was held for its prompt.
 */
export function estimatePromptTokens(request: ChatRequest): number {
  let text = "";
  for (const message of request.messages) {
    for (const part of message.parts) {
      if (part.type === "text") text += part.text;
      else if (part.type === "tool_result") text += part.content;
      else if (part.type === "tool_call") text += part.name + part.arguments;
    }
  }
  return estimateTokens(text);
}

/** The tokens of embedding inputs: token IDs count exactly, text is estimated. */
export function estimateEmbeddingTokens(inputs: readonly EmbeddingInput[]): number {
  return inputs.reduce((sum, input) => sum + (typeof input === "string" ? estimateTokens(input) : input.length), 0);
}
