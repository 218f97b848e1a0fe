import type { Kysely } from "kysely";
import type { Database, UserRow } from "../db/schema.ts";

interface NewUser {
  id: string;
  email: string;
  plan: string;
  status: UserRow["status"];
  balanceMicros: number;
  now: number;
}

/**
 * Inserts a user; an opening balance is written as a `topup` ledger row, so the ledger sums
 * to the balance from the first moment. Call inside a transaction.
 */
export async function createUser(trx: Kysely<Database>, user: NewUser): Promise<UserRow> {
  const row: UserRow = {
    id: user.id,
    email: user.email,
    plan: user.plan,
    status: user.status,
    balance_micros: user.balanceMicros,
    total_spent_micros: 0,
    created_at: user.now,
    updated_at: user.now,
  };
  await trx.insertInto("users").values(row).execute();
  if (user.balanceMicros > 0) {
    await trx
      .insertInto("ledger")
      .values({
        user_id: user.id,
        kind: "topup",
        amount_micros: user.balanceMicros,
        balance_after_micros: user.balanceMicros,
        reference: "opening balance",
        created_at: user.now,
      })
      .execute();
  }
  return row;
}
