import type { ChatRequest, StreamPart } from "../../canonical/chat.ts";
import type { UpstreamWarnings } from "../warnings.ts";
import type { ChatAdapter } from "../adapter.ts";
import { randomBase62 } from "../../lib/random-id.ts";
import { mockChatReply } from "./mock-chat-reply.ts";
import { batchesOf } from "../../streams/batch-source.ts";
import { estimatePromptTokens } from "../../canonical/estimate-prompt-tokens.ts";

/**
 * The built-in offline model: answers by echoing the last user message (in JSON when asked
 * for JSON), calls a tool when tools are offered, streams word by word. Deterministic apart from the response id.
 */
export const mockChatAdapter: ChatAdapter = {
  async complete(request, call) {
    warnThinking(request, call.warnings);
    const reply = mockChatReply(request);
    return {
      id: `mock-${randomBase62(16)}`,
      model: call.upstreamModel,
      created: Math.floor(call.now() / 1000),
      content: reply.content,
      finishReason: reply.finishReason,
      stopSequence: reply.stopSequence,
      usage: { inputTokens: reply.inputTokens, outputTokens: reply.outputTokens },
    };
  },

  async stream(request, call) {
    warnThinking(request, call.warnings);
    const reply = mockChatReply(request);
    const parts: StreamPart[] = [{ type: "start", id: `mock-${randomBase62(16)}`, model: call.upstreamModel, created: Math.floor(call.now() / 1000) }];
    reply.content.forEach((part, index) => {
      if (part.type === "text") {
        for (const [i, word] of part.text.split(" ").entries()) parts.push({ type: "text-delta", text: i === 0 ? word : ` ${word}` });
      } else if (part.type === "tool_call") {
        parts.push({ type: "tool-call-start", index, id: part.id, name: part.name });
        parts.push({ type: "tool-call-delta", index, argumentsDelta: part.arguments });
      }
    });
    parts.push({ type: "finish", finishReason: reply.finishReason, stopSequence: reply.stopSequence });
    parts.push({ type: "usage", usage: { inputTokens: reply.inputTokens, outputTokens: reply.outputTokens } });
    // One delivery per part, as a real upstream streams word by word.
    return { parts: batchesOf(parts.map((part) => [part])), native: false };
  },

  /** Exact, not an estimate: the mock counts its prompts this way in its usage too (mockChatReply). */
  async countTokens(request) {
    return { inputTokens: estimatePromptTokens(request) };
  },
};

/** The demo model answers without thinking: a caller who set how hard the model thinks is told. */
function warnThinking(request: ChatRequest, warnings: UpstreamWarnings): void {
  if (request.reasoning) warnings.add("reasoning", "the demo model does not think; ignored");
}
