import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import type { Logger } from "../lib/logger.ts";
import { nextTurn } from "../lib/next-turn.ts";

interface PendingHold {
  userId: string;
  amountMicros: number;
  requestId: string;
  createdAt: number;
  resolve(held: boolean): void;
  reject(error: unknown): void;
}

/** Rows per multi-row INSERT, well under SQLite's bound-parameter limit. */
const ROWS_PER_STATEMENT = 300;

/**
 * Takes holds on account balances before upstream calls. Holds requested in one event-loop
 * turn are decided in one write transaction (BEGIN IMMEDIATE, so correct across processes
 * sharing the database): balances are read, each hold granted in arrival order while the
 * balance covers it, then one UPDATE per account and multi-row ledger and hold inserts.
 */
export class HoldBatcher {
  #queue: PendingHold[] = [];
  #scheduled = false;
  #running: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instanceId: () => string,
    private readonly log: Logger,
  ) {}

  /** Holds `amountMicros` of the account for a request; false when the balance cannot cover it. */
  hold(userId: string, amountMicros: number, requestId: string, createdAt: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ userId, amountMicros, requestId, createdAt, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        nextTurn(() => {
          this.#scheduled = false;
          const batch = this.#queue;
          this.#queue = [];
          // One batch at a time: they share the single connection anyway.
          this.#running = this.#running.then(() => this.#decide(batch));
        });
      }
    });
  }

  async #decide(batch: PendingHold[]): Promise<void> {
    try {
      const granted = await writeTransaction(this.db, (trx) => this.#write(trx, batch));
      batch.forEach((pending, i) => pending.resolve(granted[i]!));
    } catch (error) {
      this.log.error("hold batch failed", { holds: batch.length, error: error instanceof Error ? error.name : "unknown" });
      for (const pending of batch) pending.reject(error);
    }
  }

  async #write(trx: Kysely<Database>, batch: PendingHold[]): Promise<boolean[]> {
    const userIds = [...new Set(batch.map((p) => p.userId))];
    const rows = await trx.selectFrom("users").select(["id", "balance_micros"]).where("id", "in", userIds).execute();
    const balance = new Map(rows.map((r) => [r.id, r.balance_micros]));
    const held = new Map<string, number>();
    const ledger: { user_id: string; kind: "hold"; amount_micros: number; balance_after_micros: number; reference: string; created_at: number }[] = [];
    const holds: { id: string; user_id: string; amount_micros: number; instance_id: string; created_at: number }[] = [];
    const granted = batch.map((pending) => {
      const available = balance.get(pending.userId);
      if (available === undefined || available < pending.amountMicros) return false;
      const after = available - pending.amountMicros;
      balance.set(pending.userId, after);
      held.set(pending.userId, (held.get(pending.userId) ?? 0) + pending.amountMicros);
      ledger.push({ user_id: pending.userId, kind: "hold", amount_micros: -pending.amountMicros, balance_after_micros: after, reference: pending.requestId, created_at: pending.createdAt });
      holds.push({ id: pending.requestId, user_id: pending.userId, amount_micros: pending.amountMicros, instance_id: this.instanceId(), created_at: pending.createdAt });
      return true;
    });
    for (const [userId, amount] of held) {
      await trx.updateTable("users").set((eb) => ({ balance_micros: eb("balance_micros", "-", amount) })).where("id", "=", userId).execute();
    }
    for (let i = 0; i < ledger.length; i += ROWS_PER_STATEMENT) {
      await trx.insertInto("ledger").values(ledger.slice(i, i + ROWS_PER_STATEMENT)).execute();
      await trx.insertInto("holds").values(holds.slice(i, i + ROWS_PER_STATEMENT)).execute();
    }
    return granted;
  }
}
