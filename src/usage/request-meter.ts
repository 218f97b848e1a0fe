import { newId } from "../lib/random-id.ts";
import type { UsageWriter } from "./usage-writer.ts";
import type { Hold } from "../billing/hold-batcher.ts";
import type { Price } from "../pricing/price.ts";
import { computeCost, type BillableUsage } from "../billing/compute-cost.ts";

/** Who made a request and what it asked for: the fixed half of its usage row. */
export interface RequestFacts {
  requestId: string;
  userId: string;
  tokenId: string;
  model: string;
  /** The request path, e.g. /v1/chat/completions. */
  endpoint: string;
  stream: boolean;
  startedAt: number;
}

/** The outcome half of a usage row. */
export interface RequestOutcome {
  status: number;
  usage: BillableUsage | null;
  channelId: string | null;
  /** Whether the answer was streamed, where not as asked: an upstream that ignores `stream` (whisper-1) answers whole. */
  streamed?: boolean;
}

/**
 * Writes the one usage row of a request. `finish` may be reached from several paths (a
 * completed stream, a cancelled one, an error); only the first call writes.
 */
export class RequestMeter {
  #finished: Promise<void> | null = null;
  /** Funds held for this request; settled with its usage row. */
  hold: Hold | null = null;
  /** Told the request's total tokens when it finishes (settles the tokens-per-minute reservation). */
  onTokensUsed: ((tokens: number) => void) | undefined;

  constructor(
    private readonly writer: UsageWriter,
    readonly facts: RequestFacts,
    private readonly now: () => number,
    /** The model's price at the time of the request; none means it is served free. */
    private readonly price: Price | undefined,
  ) {}

  /** Records the outcome; resolves once the row is committed. */
  finish(outcome: RequestOutcome): Promise<void> {
    if (this.#finished) return this.#finished;
    this.onTokensUsed?.(outcome.usage ? outcome.usage.inputTokens + outcome.usage.outputTokens : 0);
    this.#finished = this.writer.record({
      id: newId("use"),
      request_id: this.facts.requestId,
      user_id: this.facts.userId,
      token_id: this.facts.tokenId,
      model: this.facts.model,
      endpoint: this.facts.endpoint,
      prompt_tokens: outcome.usage?.inputTokens ?? 0,
      completion_tokens: outcome.usage?.outputTokens ?? 0,
      cost_micros: outcome.usage ? computeCost(this.price, outcome.usage) : 0,
      status: outcome.status,
      latency_ms: Math.max(0, Math.round(this.now() - this.facts.startedAt)),
      channel_id: outcome.channelId,
      stream: (outcome.streamed ?? this.facts.stream) ? 1 : 0,
      created_at: this.facts.startedAt,
    }, this.hold);
    return this.#finished;
  }
}
