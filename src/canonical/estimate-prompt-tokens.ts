import { estimateTokens, tokensOfLength } from "../lib/estimate-tokens.ts";
import type { ChatRequest } from "./chat.ts";
import type { EmbeddingInput } from "./media.ts";

/**
 * An image's tokens when its size is unknown: OpenAI's count for a 1024x1024 picture in high
 * detail. Anthropic counts such a picture at about 1,400 tokens and Gemini at 258; no one
 * figure is right for every upstream, and a count that left images out was wrong for all.
 */
const IMAGE_TOKENS = 765;

/**
 * The prompt's token estimate: its text, tool calls and tool results, and the tool
 * definitions and answer schema the upstream reads with it, at about 4 characters a token,
 * plus IMAGE_TOKENS an image. The one estimate for holds, for streams without reported usage,
 * for token counts no upstream made, and for the mock model's own count, so a mock request
 * costs exactly what was held for its prompt.
 */
export function estimatePromptTokens(request: ChatRequest): number {
  let length = 0;
  let images = 0;
  for (const message of request.messages) {
    for (const part of message.parts) {
      if (part.type === "text") length += part.text.length;
      else if (part.type === "tool_result") length += part.content.length;
      else if (part.type === "tool_call") length += part.name.length + part.arguments.length;
      else if (part.type === "image") images += 1;
    }
  }
  for (const tool of request.tools ?? []) length += tool.name.length + (tool.description?.length ?? 0) + JSON.stringify(tool.parameters).length;
  if (request.responseFormat?.type === "json_schema") length += JSON.stringify(request.responseFormat.schema).length;
  return tokensOfLength(length) + images * IMAGE_TOKENS;
}

/** The tokens of embedding inputs: token IDs count exactly, text is estimated. */
export function estimateEmbeddingTokens(inputs: readonly EmbeddingInput[]): number {
  return inputs.reduce((sum, input) => sum + (typeof input === "string" ? estimateTokens(input) : input.length), 0);
}
