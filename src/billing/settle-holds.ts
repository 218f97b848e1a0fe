import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

/** One request's money outcome: what was held for it and what it cost. */
export interface Settlement {
  userId: string;
  requestId: string;
  holdMicros: number;
  costMicros: number;
  at: number;
}

const ROWS_PER_STATEMENT = 300;

/**
 * Settles requests inside the caller's transaction: each releases its hold and pays its
 * exact cost in one ledger row (`settle`, or `refund` when it cost nothing), the account
 * moves by the sum, and the holds are deleted. A cost above the hold is still charged
 * (the documented overdraft); the balance may then go negative and the next hold fails.
 */
export async function settleHolds(trx: Kysely<Database>, settlements: readonly Settlement[]): Promise<void> {
  const relevant = settlements.filter((s) => s.holdMicros > 0 || s.costMicros > 0);
  if (relevant.length === 0) return;
  const userIds = [...new Set(relevant.map((s) => s.userId))];
  const rows = await trx.selectFrom("users").select(["id", "balance_micros"]).where("id", "in", userIds).execute();
  const balance = new Map(rows.map((r) => [r.id, r.balance_micros]));
  const delta = new Map<string, number>();
  const spent = new Map<string, number>();
  const ledger = relevant.flatMap((s) => {
    const current = balance.get(s.userId);
    if (current === undefined) return [];
    const amount = s.holdMicros - s.costMicros;
    balance.set(s.userId, current + amount);
    delta.set(s.userId, (delta.get(s.userId) ?? 0) + amount);
    spent.set(s.userId, (spent.get(s.userId) ?? 0) + s.costMicros);
    return [{
      user_id: s.userId,
      kind: s.costMicros === 0 ? ("refund" as const) : ("settle" as const),
      amount_micros: amount,
      balance_after_micros: current + amount,
      reference: s.requestId,
      created_at: s.at,
    }];
  });
  const last = relevant.reduce((max, s) => Math.max(max, s.at), 0);
  for (const [userId, amount] of delta) {
    await trx
      .updateTable("users")
      .set((eb) => ({
        balance_micros: eb("balance_micros", "+", amount),
        total_spent_micros: eb("total_spent_micros", "+", spent.get(userId) ?? 0),
        updated_at: last,
      }))
      .where("id", "=", userId)
      .execute();
  }
  const heldIds = relevant.filter((s) => s.holdMicros > 0).map((s) => s.requestId);
  for (let i = 0; i < ledger.length; i += ROWS_PER_STATEMENT) {
    await trx.insertInto("ledger").values(ledger.slice(i, i + ROWS_PER_STATEMENT)).execute();
  }
  for (let i = 0; i < heldIds.length; i += ROWS_PER_STATEMENT) {
    await trx.deleteFrom("holds").where("id", "in", heldIds.slice(i, i + ROWS_PER_STATEMENT)).execute();
  }
}
