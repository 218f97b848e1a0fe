import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

/** One account whose books do not add up. */
export interface LedgerProblem {
  userId: string;
  balanceMicros: number;
  ledgerSumMicros: number;
}

/** What the doctor found: every account checked, the mismatches, and holds and balance leases still open. */
export interface LedgerReport {
  accounts: number;
  problems: LedgerProblem[];
  openHolds: number;
  openLeases: number;
}

/**
 * Checks the money invariant for every account: the sum of its ledger rows equals its
 * balance. One grouped pass over the ledger (it has no per-account index: it is written on
 * every request and read only here). Open holds and balance leases are reported too: on a
 * stopped gateway there must be none.
 */
export async function checkLedger(db: Kysely<Database>): Promise<LedgerReport> {
  const rows = await sql<{ id: string; balance_micros: number; ledger_sum: number | null }>`
    select u.id, u.balance_micros, l.ledger_sum
    from users u left join (select user_id, sum(amount_micros) as ledger_sum from ledger group by user_id) l on l.user_id = u.id`.execute(db);
  const problems = rows.rows
    .filter((r) => (r.ledger_sum ?? 0) !== r.balance_micros)
    .map((r) => ({ userId: r.id, balanceMicros: r.balance_micros, ledgerSumMicros: r.ledger_sum ?? 0 }));
  const holds = await db.selectFrom("holds").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const leases = await db.selectFrom("balance_leases").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { accounts: rows.rows.length, problems, openHolds: Number(holds.n), openLeases: Number(leases.n) };
}
