import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

/**
 * Debits an account for a served request and writes the matching `settle` ledger row with
 * the balance after it. Call inside the transaction that records the request's usage, so
 * the usage row and the charge commit together or not at all.
 */
export async function chargeAccount(trx: Kysely<Database>, userId: string, costMicros: number, requestId: string, now: number): Promise<void> {
  const user = await trx
    .updateTable("users")
    .set((eb) => ({
      balance_micros: eb("balance_micros", "-", costMicros),
      total_spent_micros: eb("total_spent_micros", "+", costMicros),
      updated_at: now,
    }))
    .where("id", "=", userId)
    .returning("balance_micros")
    .executeTakeFirst();
  if (!user) return;
  await trx
    .insertInto("ledger")
    .values({ user_id: userId, kind: "settle", amount_micros: -costMicros, balance_after_micros: user.balance_micros, reference: requestId, created_at: now })
    .execute();
}
