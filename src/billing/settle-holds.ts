import type { SyncSql } from "../db/sync-sql.ts";
import type { Journal } from "../db/write-turn.ts";
import { RowInserter } from "../db/insert-rows.ts";
import { DELETE_HOLD, INSERT_LEDGER, SELECT_BALANCE, SETTLE_BALANCE } from "./billing-sql.ts";
import type { Hold } from "./hold-batcher.ts";
import type { LeaseBook } from "./lease-book.ts";

const LEDGER_ROWS = new RowInserter(INSERT_LEDGER);

/** One request's money outcome: what was held for it and what it cost. */
export interface Settlement {
  userId: string;
  requestId: string;
  hold: Hold | null;
  costMicros: number;
  /** When the request started (its hold's time) and when it finished. */
  startedAt: number;
  at: number;
}

/**
 * Settles requests inside the caller's write transaction: each releases its hold and pays its
 * exact cost in one ledger row (`settle`, or `refund` when it cost nothing), the account
 * moves by the sum, and hold rows are deleted. A hold drawn on this instance's lease never
 * reached the ledger, so its `hold` row is written here, just before the settlement, and the
 * lease gives up what the request held (LeaseBook.spend; its row is written once per account
 * per batch, as is the balance). A cost above the hold is still charged (the documented
 * overdraft); the balance may then go negative and the next hold fails. The batch's ledger
 * rows are inserted together at the end, in the order they were computed.
 */
export function settleHolds(sql: SyncSql, settlements: readonly Settlement[], leases: LeaseBook, journal: Journal): void {
  const balance = new Map<string, number | undefined>();
  const delta = new Map<string, { amount: number; spent: number; at: number; leaseSpent: number }>();
  const ledgerRows: unknown[][] = [];
  for (const s of settlements) {
    let held = s.hold?.micros ?? 0;
    if (s.hold?.leased) leases.release(s.userId, held, journal);
    if (held <= 0 && s.costMicros <= 0) continue;
    if (!balance.has(s.userId)) balance.set(s.userId, sql.get<{ balance_micros: number }>(SELECT_BALANCE, [s.userId])?.balance_micros);
    let current = balance.get(s.userId);
    if (current === undefined) continue;
    const sum = delta.get(s.userId) ?? { amount: 0, spent: 0, at: 0, leaseSpent: 0 };
    if (s.hold?.leased) {
      current -= held;
      sum.amount -= held;
      ledgerRows.push([s.userId, "hold", -held, current, s.requestId, s.startedAt]);
      sum.leaseSpent += leases.spend(s.userId, held, s.costMicros, journal);
    } else if (held > 0 && sql.run(DELETE_HOLD, [s.requestId]) === 0) {
      // Refunded already: another instance took this one for dead. Only the cost is charged.
      held = 0;
    }
    const amount = held - s.costMicros;
    current += amount;
    balance.set(s.userId, current);
    delta.set(s.userId, { amount: sum.amount + amount, spent: sum.spent + s.costMicros, at: Math.max(sum.at, s.at), leaseSpent: sum.leaseSpent });
    ledgerRows.push([s.userId, s.costMicros === 0 ? "refund" : "settle", amount, current, s.requestId, s.at]);
  }
  LEDGER_ROWS.insert(sql, ledgerRows);
  for (const [userId, sum] of delta) {
    leases.writeSpent(sql, userId, sum.leaseSpent, journal);
    sql.run(SETTLE_BALANCE, [sum.amount, sum.spent, sum.at, userId]);
  }
}
