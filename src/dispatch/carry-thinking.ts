import type { ChatRequest, SignedThinking } from "../canonical/chat.ts";
import { answeredToolCallTurn, firstToolCallId } from "../canonical/answered-tool-calls.ts";
import type { KeptThinking } from "../state/kept-thinking.ts";

/**
 * Whether the caller speaks Anthropic's format: it then carries its thinking in its own turns,
 * and the gateway neither keeps nor puts back any for it.
 */
const carriesOwnThinking = (request: ChatRequest) => request.native?.format === "anthropic";

/**
 * `request` with the thinking kept for the tool calls it answers put back in their turn, when
 * it asks the model to think: an Anthropic upstream then thinks on (see applyThinking).
 */
export function withKeptThinking(request: ChatRequest, kept: KeptThinking, owner: string): ChatRequest {
  if (!request.reasoning || request.reasoning.effort === "none" || carriesOwnThinking(request)) return request;
  const turn = answeredToolCallTurn(request.messages);
  const id = turn && !turn.signedThinking ? firstToolCallId(turn.parts) : undefined;
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
