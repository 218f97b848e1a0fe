import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";

let dir: string;
let database: OpenDatabase;
afterEach(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the doctor's check names every account whose ledger does not sum to its balance, and only those", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-check-ledger-"));
  database = openDatabase(`file:${join(dir, "gateway.db")}`);
  const { db } = database;
  await migrate(db, () => 1);
  const user = (id: string, balance: number) => ({ id, email: `${id}@example.com`, plan: "free", status: "active" as const, balance_micros: balance, total_spent_micros: 0, created_at: 1, updated_at: 1 });
  await db.insertInto("users").values([user("usr_ok", 70), user("usr_drift", 71), user("usr_empty", 0), user("usr_unbooked", 5)]).execute();
  const entry = (userId: string, kind: "topup" | "settle", amount: number, after: number) => ({ user_id: userId, kind, amount_micros: amount, balance_after_micros: after, reference: null, created_at: 1 });
  await db.insertInto("ledger").values([
    entry("usr_ok", "topup", 100, 100),
    entry("usr_drift", "topup", 100, 100),
    entry("usr_ok", "settle", -30, 70),
    entry("usr_drift", "settle", -30, 70),
  ]).execute();
  await db.insertInto("holds").values({ id: "req_1", user_id: "usr_ok", amount_micros: 1, instance_id: "inst_1", created_at: 1 }).execute();

  const report = await checkLedger(db);

  expect(report.accounts).toBe(4);
  expect(report.openHolds).toBe(1);
  expect(report.problems.sort((a, b) => a.userId.localeCompare(b.userId))).toEqual([
    { userId: "usr_drift", balanceMicros: 71, ledgerSumMicros: 70 },
    { userId: "usr_unbooked", balanceMicros: 5, ledgerSumMicros: 0 },
  ]);
});
