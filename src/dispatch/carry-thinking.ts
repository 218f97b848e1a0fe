import type { ChatMessage, ChatRequest, SignedThinking } from "../canonical/chat.ts";
import { answeredToolLoop, firstToolCallId } from "../canonical/answered-tool-calls.ts";
import type { KeptThinking } from "../state/kept-thinking.ts";
import type { ChannelRegistry } from "../channels/channel-registry.ts";
import { CHAT_ADAPTERS } from "../upstreams/chat-adapters.ts";

/**
 * Whether the caller speaks Anthropic's format: it then carries its thinking in its own turns,
 * and the gateway neither keeps nor puts back any for it.
 */
const carriesOwnThinking = (request: ChatRequest) => request.native?.format === "anthropic";

/**
 * `request` with the thinking kept for the tool loop it continues put back in the loop's
 * messages, each answer's where it was made (see answeredToolLoop), when it asks the model to
 * think and a channel of its model takes it: an Anthropic upstream then thinks on (see
 * applyThinking). One database read for the whole loop; other models' turns cost none.
 */
export function withKeptThinking(request: ChatRequest, kept: KeptThinking, owner: string, channels: ChannelRegistry): ChatRequest {
  if (!request.reasoning || request.reasoning.effort === "none" || carriesOwnThinking(request)) return request;
  const loop = answeredToolLoop(request.messages);
  if (!loop || !channels.candidatesFor(request.model).some((channel) => CHAT_ADAPTERS[channel.type]?.takesKeptThinking)) return request;
  const ids = loop.flatMap((message) => firstToolCallId(message.parts) ?? []);
  const found = ids.length > 0 ? kept.recall(owner, ids) : undefined;
  if (!found?.size) return request;
  // A Set, not loop.includes: an agent's loop may hold hundreds of answers, each message asked once.
  const inLoop = new Set(loop);
  const keptFor = (message: ChatMessage) => {
    const id = inLoop.has(message) ? firstToolCallId(message.parts) : undefined;
    return id === undefined ? undefined : found.get(id);
  };
  return {
    ...request,
    messages: request.messages.map((message) => {
      const signedThinking = keptFor(message);
      return signedThinking ? { ...message, signedThinking } : message;
    }),
  };
}

/**
 * Keeps an answer's signed thinking for `owner`, when the answer called tools: the turn that
 * answers them will want it back. Undefined when there is nothing to keep.
 */
export function keepThinking(
  kept: KeptThinking,
  request: ChatRequest,
  owner: string,
  firstCallId: string | undefined,
  blocks: readonly SignedThinking[] | undefined,
): Promise<void> | undefined {
  return firstCallId && blocks && blocks.length > 0 && !carriesOwnThinking(request) ? kept.keep(owner, firstCallId, blocks) : undefined;
}
