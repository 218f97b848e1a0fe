import { accountBooks, openReadOnly, runDoctorCli } from "../../test/billing/_support.ts";
import type { Tally } from "./tally.ts";
import type { Account } from "./world.ts";

/** Tables whose rows a steady load should not pile up (usage, ledger and idempotency rows grow with requests and top-ups): printed at each sample. */
export const BOUNDED_TABLES = ["holds", "balance_leases", "instances", "rate_windows"] as const;

/** Row counts of the bounded tables, e.g. "holds 0, balance_leases 1, ...". */
export function boundedTableRows(dir: string): string {
  const db = openReadOnly(dir);
  try {
    return BOUNDED_TABLES.map((table) => `${table} ${(db.query(`select count(*) as n from ${table}`).get() as { n: number }).n}`).join(", ");
  } finally {
    db.close();
  }
}

/** One account's usage rows against what its client saw, for the report. */
export interface RowsVsClient {
  account: string;
  /** Metered requests the client got a 2xx head for. */
  answered: number;
  /** Of those, read whole. */
  whole: number;
  /** Usage rows whose request id is one of `answered`. */
  rowsForAnswered: number;
  rows200: number;
  rowsTotal: number;
  /** Rows of requests the client never got a head for (it hung up first): at most `hungUpEarly`. */
  rowsUnseen: number;
  hungUpEarly: number;
}

/**
 * Holds the database, with traffic stopped and settled, to what the clients saw: no hold or
 * lease left, each account's ledger summing to its balance, one usage row per metered request
 * answered (a 200 row for each read whole), no row the client cannot account for, and the
 * doctor passing. Returns the violations and the rows-vs-client figures.
 */
export async function checkDatabase(dir: string, accounts: readonly Account[], tally: Tally, instances: number): Promise<{ violations: string[]; rows: RowsVsClient[] }> {
  const violations: string[] = [];
  const rows: RowsVsClient[] = [];
  const db = openReadOnly(dir);
  try {
    const count = (sql: string) => (db.query(sql).get() as { n: number }).n;
    const holds = count("select count(*) as n from holds");
    if (holds > 0) violations.push(`${holds} holds left open with no request in flight`);
    const leases = count("select count(*) as n from balance_leases");
    if (leases > 0) violations.push(`${leases} balance leases left after the 250 ms idle hand-back`);
    const records = count("select count(*) as n from instances");
    if (records !== instances) violations.push(`${records} instance records for ${instances} instances`);
    for (const account of accounts) {
      const books = accountBooks(db, account.userId);
      if (books.balance !== books.ledgerSum) violations.push(`${account.name}: balance ${books.balance} != ledger sum ${books.ledgerSum}`);
      const usage = db.query("select request_id as id, status, count(*) as n from usage_logs where user_id = ? group by request_id").all(account.userId) as { id: string; status: number; n: number }[];
      rows.push(compareRows(account.name, usage, tally, violations));
    }
  } finally {
    db.close();
  }
  const doctor = await runDoctorCli(dir, 30_000);
  const clean = /\b0 ledger mismatches; 0 open holds; 0 open balance leases\b/.test(doctor.stdout);
  if (doctor.code !== 0 || !clean) violations.push(`doctor (exit ${doctor.code}): ${doctor.stdout.trim()}`);
  return { violations, rows };
}

function compareRows(name: string, usage: { id: string; status: number; n: number }[], tally: Tally, violations: string[]): RowsVsClient {
  const seen = tally.byAccount.get(name) ?? { seen: new Map(), unseen: 0 };
  const figures: RowsVsClient = { account: name, answered: 0, whole: 0, rowsForAnswered: 0, rows200: 0, rowsTotal: 0, rowsUnseen: 0, hungUpEarly: seen.unseen };
  const byId = new Map(usage.map((row) => [row.id, row]));
  for (const row of usage) {
    figures.rowsTotal += row.n;
    if (row.status === 200) figures.rows200 += row.n;
    if (row.n > 1) violations.push(`${name}: request ${row.id} has ${row.n} usage rows`);
    if (!seen.seen.has(row.id)) figures.rowsUnseen += row.n;
  }
  for (const [id, request] of seen.seen) {
    const row = byId.get(id);
    if (request.status < 200 || request.status > 299) continue;
    figures.answered++;
    if (request.whole) figures.whole++;
    if (row) figures.rowsForAnswered += row.n;
    else violations.push(`${name}: request ${id} was answered ${request.status} but has no usage row`);
    if (row && request.whole && row.status !== 200) violations.push(`${name}: request ${id} was read whole but its row says ${row.status}`);
  }
  if (figures.rowsUnseen > figures.hungUpEarly) violations.push(`${name}: ${figures.rowsUnseen} usage rows of requests the client never got an answer head for, but it hung up early only ${figures.hungUpEarly} times`);
  return figures;
}

/** Lines of the instances' output that hold a secret (an API key, a channel's api_key), and error lines. */
export function checkLogs(outputs: readonly string[], secrets: readonly string[]): string[] {
  const violations: string[] = [];
  outputs.forEach((output, instance) => {
    for (const secret of secrets) if (output.includes(secret)) violations.push(`instance ${instance} logged a secret (${secret.slice(0, 12)}...)`);
    const errors = output.split("\n").filter((line) => line.includes('"level":"error"'));
    for (const line of errors.slice(0, 5)) violations.push(`instance ${instance} logged an error: ${line.slice(0, 300)}`);
    if (errors.length > 5) violations.push(`instance ${instance} logged ${errors.length - 5} more errors`);
  });
  return violations;
}
