/** A 200 the client read to its proper end: its usage row must be in the database. */
export interface CompletedRequest {
  requestId: string;
  userId: string;
  what: string;
}

/** One client top-up: its own amount (unique in the soak, so its ledger row is known), key and every answer. */
export interface TopUpAttempt {
  seq: number;
  userId: string;
  amountMicros: number;
  idempotencyKey: string | null;
  answers: { status: number | "lost"; transactionId?: string }[];
}

/**
 * What the clients of a soak saw: statuses, the successes they read whole, the 500s, the
 * top-ups and the price history. The invariants hold the database to these.
 */
export class Observations {
  requests = 0;
  readonly statuses = new Map<string, number>();
  readonly completed: CompletedRequest[] = [];
  readonly serverErrors: string[] = [];
  /** The first few answers of each error status, to tell why they came. */
  readonly samples = new Map<number, string[]>();
  readonly topUps: TopUpAttempt[] = [];
  /** Every chat price ever posted, per model, whatever the answer (a killed instance may have stored it). */
  readonly priceHistory = new Map<string, Set<string>>();
  priceChanges = 0;

  count(outcome: string): void {
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
  }

  /** Counts a response's status; a 500 is kept whole, since no input of the soak justifies one. */
  status(status: number, what: string, body: string): void {
    this.count(String(status));
    if (status >= 400) {
      const samples = this.samples.get(status) ?? [];
      if (samples.length < 3) this.samples.set(status, [...samples, `${what}: ${body.slice(0, 200)}`]);
    }
    if (status === 500) this.serverErrors.push(`${what}: ${body.slice(0, 300)}`);
  }

  notePrice(model: string, price: { input_per_million: number; output_per_million: number }): void {
    let set = this.priceHistory.get(model);
    if (!set) this.priceHistory.set(model, (set = new Set()));
    set.add(`${price.input_per_million}/${price.output_per_million}`);
  }

  statusSummary(): string {
    return [...this.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`).join(", ");
  }
}
