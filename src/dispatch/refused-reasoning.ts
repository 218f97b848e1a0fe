import type { ChatRequest, ReasoningRequest } from "../canonical/chat.ts";
import type { ChatAdapter, UpstreamCall } from "../upstreams/adapter.ts";
import { effortOf } from "../translate/reasoning.ts";
import { remedyForRefusedReasoning, type ReasoningRemedy } from "../upstreams/refused-reasoning.ts";
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
 * in memory, for a while, and what the setting became for them. A setting with a budget is
 * remembered apart from one without: a model may take one form and not the other (Gemini 2.5
 * takes a thinkingBudget and refuses a thinkingLevel; Claude 4.5 takes a budget and refuses
 * adaptive thinking; Claude Opus 4.7 the other way round).
 */
export class ReasoningRefusals {
  /** Each refusal's remedy and until when it is remembered, oldest first (a Map keeps its insertion order). */
  #remembered = new Map<string, { remedy: ReasoningRemedy; until: number }>();

  constructor(private readonly now: () => number) {}

  /** The remedy for `key`'s model if it refused reasoning within REMEMBERED_MS. */
  remedyFor(key: string): ReasoningRemedy | undefined {
    const refusal = this.#remembered.get(key);
    if (refusal === undefined) return undefined;
    if (refusal.until > this.now()) return refusal.remedy;
    this.#remembered.delete(key);
    return undefined;
  }

  /** Remembers that `key`'s model refused reasoning, and what the setting becomes for it. */
  remember(key: string, remedy: ReasoningRemedy): void {
    this.#remembered.delete(key);
    if (this.#remembered.size >= MOST_REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value!);
    this.#remembered.set(key, { remedy, until: this.now() + REMEMBERED_MS });
  }
}

/** What a refusal is remembered under: the channel, the model it was sent to, and the setting's form. */
function keyOf(call: UpstreamCall, reasoning: ReasoningRequest): string {
  return `${call.channel.id}\n${call.upstreamModel}\n${reasoning.budgetTokens === undefined ? "effort" : "budget"}`;
}

/**
 * The request with its refused reasoning remedied, said so in the warnings: without it, or
 * with a budget as adaptive thinking. The budget becomes the effort it stands for (as for any
 * upstream that takes an effort, see effortOf), not the model's own choice: a caller that
 * named a small budget wanted a short think, and an adaptive model left to itself may think
 * at length (and bill for it).
 */
function remedied(request: ChatRequest, reasoning: ReasoningRequest, remedy: ReasoningRemedy, call: UpstreamCall): ChatRequest {
  if (remedy === "leave out") {
    call.warnings.add("reasoning", NOT_PASSED_ON);
    return { ...request, reasoning: undefined };
  }
  const effort = effortOf(reasoning);
  call.warnings.add("reasoning", `thinking budget sent as adaptive thinking${effort ? ` at effort ${effort}` : ""}: the upstream model thinks adaptively only`);
  return { ...request, reasoning: { effort } };
}

/**
 * Sends a request translated for `adapter` (the caller's format is not the upstream's) with
 * `send`. A reasoning setting the upstream model refused (its 400, see
 * remedyForRefusedReasoning) was the translation's doing, not the caller's: the request goes
 * again at once on the same channel without it (or, a budget to a model that thinks adaptively
 * only, with adaptive thinking instead), and the model is remembered, so the next requests go
 * so from the start. Either way a warning says so. The retry is no failover: the channel is not at fault,
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
  const reasoning = request.reasoning;
  if (!reasoning || format === undefined) return send(adapter, request, call);
  const key = keyOf(call, reasoning);
  const remembered = refusals.remedyFor(key);
  if (remembered) return send(adapter, remedied(request, reasoning, remembered, call), call);
  // What the first try noted is its own: the retry's translation notes its warnings again.
  const noted = call.warnings.count;
  try {
    return await send(adapter, request, call);
  } catch (error) {
    const remedy = error instanceof UpstreamError ? remedyForRefusedReasoning(error, format) : undefined;
    if (!remedy) throw error;
    refusals.remember(key, remedy);
    call.warnings.forgetSince(noted);
    call.calledAgain?.();
    return send(adapter, remedied(request, reasoning, remedy, call), call);
  }
}
