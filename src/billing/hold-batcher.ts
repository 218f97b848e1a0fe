import type { SyncSql } from "../db/sync-sql.ts";
import { TurnBatch, type WriteTurn } from "../db/write-turn.ts";
import type { Logger } from "../lib/logger.ts";
import { DEBIT_BALANCE, INSERT_HOLD, INSERT_LEDGER, SELECT_BALANCE } from "./billing-sql.ts";

interface PendingHold {
  userId: string;
  amountMicros: number;
  requestId: string;
  createdAt: number;
  resolve(held: boolean): void;
  reject(error: unknown): void;
}

/**
 * Takes holds on account balances before upstream calls. Holds requested in one event-loop
 * turn are decided in one job of that turn's write transaction (BEGIN IMMEDIATE, so correct
 * across processes sharing the database): balances are read, each hold granted in arrival
 * order while the balance covers it, with its ledger and hold rows, then one UPDATE per account.
 */
export class HoldBatcher {
  readonly #batch: TurnBatch<PendingHold, boolean[]>;

  constructor(
    turn: WriteTurn,
    private readonly instanceId: () => string,
    private readonly log: Logger,
  ) {
    this.#batch = new TurnBatch(turn, (sql, batch) => this.#write(sql, batch), (batch, outcome) => {
      if (outcome.ok) {
        batch.forEach((pending, i) => pending.resolve(outcome.result[i]!));
        return;
      }
      const { error } = outcome;
      this.log.error("hold batch failed", { holds: batch.length, error: error instanceof Error ? error.name : "unknown" });
      for (const pending of batch) pending.reject(error);
    });
  }

  /** Holds `amountMicros` of the account for a request; false when the balance cannot cover it. */
  hold(userId: string, amountMicros: number, requestId: string, createdAt: number): Promise<boolean> {
    return new Promise((resolve, reject) => this.#batch.push({ userId, amountMicros, requestId, createdAt, resolve, reject }));
  }

  #write(sql: SyncSql, batch: PendingHold[]): boolean[] {
    const balance = new Map<string, number | undefined>();
    const held = new Map<string, number>();
    const instanceId = this.instanceId();
    const granted = batch.map((pending) => {
      if (!balance.has(pending.userId)) {
        balance.set(pending.userId, sql.get<{ balance_micros: number }>(SELECT_BALANCE, [pending.userId])?.balance_micros);
      }
      const available = balance.get(pending.userId);
      if (available === undefined || available < pending.amountMicros) return false;
      const after = available - pending.amountMicros;
      balance.set(pending.userId, after);
      held.set(pending.userId, (held.get(pending.userId) ?? 0) + pending.amountMicros);
      sql.run(INSERT_LEDGER, [pending.userId, "hold", -pending.amountMicros, after, pending.requestId, pending.createdAt]);
      sql.run(INSERT_HOLD, [pending.requestId, pending.userId, pending.amountMicros, instanceId, pending.createdAt]);
      return true;
    });
    for (const [userId, amount] of held) sql.run(DEBIT_BALANCE, [amount, userId]);
    return granted;
  }
}
