import type { SyncSql } from "../db/sync-sql.ts";
import { DELETE_HOLD, INSERT_LEDGER, SELECT_BALANCE, SETTLE_BALANCE } from "./billing-sql.ts";

/** One request's money outcome: what was held for it and what it cost. */
export interface Settlement {
  userId: string;
  requestId: string;
  holdMicros: number;
  costMicros: number;
  at: number;
}

/**
 * Settles requests inside the caller's write transaction: each releases its hold and pays its
 * exact cost in one ledger row (`settle`, or `refund` when it cost nothing), the account
 * moves by the sum, and the holds are deleted. A cost above the hold is still charged
 * (the documented overdraft); the balance may then go negative and the next hold fails.
 */
export function settleHolds(sql: SyncSql, settlements: readonly Settlement[]): void {
  const balance = new Map<string, number | undefined>();
  const delta = new Map<string, { amount: number; spent: number; at: number }>();
  for (const s of settlements) {
    if (s.holdMicros <= 0 && s.costMicros <= 0) continue;
    if (!balance.has(s.userId)) balance.set(s.userId, sql.get<{ balance_micros: number }>(SELECT_BALANCE, [s.userId])?.balance_micros);
    const current = balance.get(s.userId);
    if (current === undefined) continue;
    const amount = s.holdMicros - s.costMicros;
    balance.set(s.userId, current + amount);
    const sum = delta.get(s.userId) ?? { amount: 0, spent: 0, at: 0 };
    delta.set(s.userId, { amount: sum.amount + amount, spent: sum.spent + s.costMicros, at: Math.max(sum.at, s.at) });
    sql.run(INSERT_LEDGER, [s.userId, s.costMicros === 0 ? "refund" : "settle", amount, current + amount, s.requestId, s.at]);
    if (s.holdMicros > 0) sql.run(DELETE_HOLD, [s.requestId]);
  }
  for (const [userId, sum] of delta) sql.run(SETTLE_BALANCE, [sum.amount, sum.spent, sum.at, userId]);
}
