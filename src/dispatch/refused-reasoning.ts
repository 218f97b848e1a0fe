import type { ChatRequest, ReasoningRequest } from "../canonical/chat.ts";
import type { ChatAdapter, UpstreamCall } from "../upstreams/adapter.ts";
import { refusedReasoning } from "../upstreams/refused-reasoning.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";

/**
 * How long a model's refusal is remembered: long enough that a busy agent's requests pay no
 * failed round trip each, short enough that a channel whose model was changed to one that
 * reasons gets the callers' reasoning again soon.
 */
const REMEMBERED_MS = 10 * 60_000;

/** The most refusals remembered; past it the oldest is forgotten, and costs one failed call to learn again. */
const MOST_REMEMBERED = 1_000;

/** The warning of a request sent without its reasoning. */
const NOT_PASSED_ON = "not passed on: the upstream model refused it";

/**
 * Which upstream models refused a reasoning setting the translation gave them, per channel,
 * in memory, for a while. A setting with a budget is remembered apart from one without: a
 * model may take one form and not the other (Gemini 2.5 takes a thinkingBudget and refuses a
 * thinkingLevel; Claude 4.5 takes a budget and refuses adaptive thinking).
 */
export class ReasoningRefusals {
  /** Until when each refusal is remembered, oldest first (a Map keeps its insertion order). */
  #until = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Whether `key`'s model refused reasoning within REMEMBERED_MS. */
  has(key: string): boolean {
    const until = this.#until.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.#until.delete(key);
    return false;
  }

  /** Remembers that `key`'s model refused reasoning. */
  remember(key: string): void {
    this.#until.delete(key);
    if (this.#until.size >= MOST_REMEMBERED) this.#until.delete(this.#until.keys().next().value!);
    this.#until.set(key, this.now() + REMEMBERED_MS);
  }
}

/** What a refusal is remembered under: the channel, the model it was sent to, and the setting's form. */
function keyOf(call: UpstreamCall, reasoning: ReasoningRequest): string {
  return `${call.channel.id}\n${call.upstreamModel}\n${reasoning.budgetTokens === undefined ? "effort" : "budget"}`;
}

/** The request without its reasoning, said so in the warnings. */
function withoutReasoning(request: ChatRequest, call: UpstreamCall): ChatRequest {
  call.warnings.add("reasoning", NOT_PASSED_ON);
  return { ...request, reasoning: undefined };
}

/**
 * Sends a request translated for `adapter` (the caller's format is not the upstream's) with
 * `send`. A reasoning setting the upstream model refused (its 400, see refusedReasoning) was
 * the translation's doing, not the caller's: the request goes again at once on the same
 * channel without it, and the model is remembered, so the next requests leave it out from the
 * start. Either way a warning says so. The retry is no failover: the channel is not at fault,
 * the refusal is not billed, and the breaker sees only the retry's outcome. A request without
 * reasoning is sent as it is, touching nothing.
 */
export async function sendMindingRefusedReasoning<T>(
  request: ChatRequest,
  adapter: ChatAdapter,
  call: UpstreamCall,
  refusals: ReasoningRefusals,
  send: (adapter: ChatAdapter, request: ChatRequest, call: UpstreamCall) => Promise<T>,
): Promise<T> {
  const format = adapter.format;
  if (!request.reasoning || format === undefined) return send(adapter, request, call);
  const key = keyOf(call, request.reasoning);
  if (refusals.has(key)) return send(adapter, withoutReasoning(request, call), call);
  // What the first try noted is its own: the retry's translation notes its warnings again.
  const noted = call.warnings.count;
  try {
    return await send(adapter, request, call);
  } catch (error) {
    if (!(error instanceof UpstreamError) || !refusedReasoning(error, format)) throw error;
    refusals.remember(key);
    call.warnings.forgetSince(noted);
    call.calledAgain?.();
    return send(adapter, withoutReasoning(request, call), call);
  }
}
