import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

/** One account whose books do not add up. */
export interface LedgerProblem {
  userId: string;
  balanceMicros: number;
  ledgerSumMicros: number;
}

/** What the doctor found: every account checked, the mismatches, and holds still open. */
export interface LedgerReport {
  accounts: number;
  problems: LedgerProblem[];
  openHolds: number;
}

/**
 * Checks the money invariant for every account: the sum of its ledger rows equals its
 * balance. Open holds are reported too: on a stopped gateway there must be none.
 */
export async function checkLedger(db: Kysely<Database>): Promise<LedgerReport> {
  const rows = await sql<{ id: string; balance_micros: number; ledger_sum: number | null }>`
    select u.id, u.balance_micros, (select sum(amount_micros) from ledger l where l.user_id = u.id) as ledger_sum
    from users u`.execute(db);
  const problems = rows.rows
    .filter((r) => (r.ledger_sum ?? 0) !== r.balance_micros)
    .map((r) => ({ userId: r.id, balanceMicros: r.balance_micros, ledgerSumMicros: r.ledger_sum ?? 0 }));
  const holds = await db.selectFrom("holds").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { accounts: rows.rows.length, problems, openHolds: Number(holds.n) };
}
