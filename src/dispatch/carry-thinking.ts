import type { ChatRequest, SignedThinking } from "../canonical/chat.ts";
import { answeredToolCallTurn, firstToolCallId } from "../canonical/answered-tool-calls.ts";
import type { KeptThinking } from "../state/kept-thinking.ts";
import type { ChannelRegistry } from "../channels/channel-registry.ts";
import { CHAT_ADAPTERS } from "../upstreams/chat-adapters.ts";

/**
 * Whether the caller speaks Anthropic's format: it then carries its thinking in its own turns,
 * and the gateway neither keeps nor puts back any for it.
 */
const carriesOwnThinking = (request: ChatRequest) => request.native?.format === "anthropic";

/**
 * `request` with the thinking kept for the tool calls it answers put back in their turn, when
 * it asks the model to think and a channel of its model takes it: an Anthropic upstream then
 * thinks on (see applyThinking). Other models' turns cost no database read.
 */
export function withKeptThinking(request: ChatRequest, kept: KeptThinking, owner: string, channels: ChannelRegistry): ChatRequest {
  if (!request.reasoning || request.reasoning.effort === "none" || carriesOwnThinking(request)) return request;
  const turn = answeredToolCallTurn(request.messages);
  const taken = turn !== undefined && !turn.signedThinking && channels.candidatesFor(request.model).some((channel) => CHAT_ADAPTERS[channel.type]?.takesKeptThinking);
  const id = taken ? firstToolCallId(turn.parts) : undefined;
  const signedThinking = id === undefined ? undefined : kept.recall(owner, id);
  if (!signedThinking) return request;
  return { ...request, messages: request.messages.map((message) => (message === turn ? { ...message, signedThinking } : message)) };
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
