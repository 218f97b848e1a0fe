import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { LeaseBook } from "../../src/billing/lease-book.ts";
import { settleHolds } from "../../src/billing/settle-holds.ts";
import { undo, type Journal } from "../../src/db/write-turn.ts";

/** LeaseBook and settleHolds against a real migrated database, one statement at a time. */

let dir: string;
let database: OpenDatabase;
let now = 1_000;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-lease-book-"));
  database = openDatabase(`file:${join(dir, "g.db")}`);
  await migrate(database.db, () => now);
  database.sql.run(
    "INSERT INTO users (id, email, plan, status, balance_micros, total_spent_micros, created_at, updated_at) VALUES ('u1', 'u1@example.test', 'enterprise', 'active', 1000, 0, 0, 0)",
    [],
  );
  database.sql.run("INSERT INTO ledger (user_id, kind, amount_micros, balance_after_micros, reference, created_at) VALUES ('u1', 'topup', 1000, 1000, 'top_1', 0)", []);
});

afterEach(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

function leaseRow(): { amount_micros: number; open: number } | undefined {
  const row = database.sql.get<{ amount_micros: number; open: number }>("SELECT amount_micros, open FROM balance_leases WHERE user_id = 'u1'", []);
  return row && { amount_micros: row.amount_micros, open: row.open };
}
const balance = () => database.sql.get<{ balance_micros: number }>("SELECT balance_micros FROM users WHERE id = 'u1'", [])!.balance_micros;
const ledgerSum = () => database.sql.get<{ s: number }>("SELECT coalesce(sum(amount_micros), 0) AS s FROM ledger WHERE user_id = 'u1'", [])!.s;

test("a closed lease whose settlement failed to commit has free funds again, and closing gives them back", () => {
  const leases = new LeaseBook(() => "inst_a", () => now);
  const journal: Journal = [];
  leases.extend(database.sql, "u1", 500, journal);
  expect(leases.draw("u1", 100)).toBe(true);
  expect(leases.draw("u1", 100)).toBe(true);
  // Closed while both are in flight: only what they hold stays reserved.
  expect(leases.close(database.sql, "u1", journal)).toBe(300);
  expect(leaseRow()).toEqual({ amount_micros: 200, open: 0 });
  expect(leases.draw("u1", 1)).toBe(false);
  // One request ends but its settlement never commits: its 100 is reserved and free.
  leases.release("u1", 100);
  now += 1_000;
  expect(leases.idleAccounts()).toEqual(["u1"]);
  expect(leases.close(database.sql, "u1", [])).toBe(100);
  expect(leaseRow()).toEqual({ amount_micros: 100, open: 0 });
  // The other settles: nothing is left and the row goes.
  leases.release("u1", 100);
  expect(leases.spend("u1", 100, 100, [])).toBe(100);
  expect(leaseRow()).toEqual({ amount_micros: 100, open: 0 });
  leases.writeSpent(database.sql, "u1", 100, []);
  expect(leaseRow()).toBeUndefined();
});

test("a hold row another instance already refunded is not credited again when its request settles", () => {
  const leases = new LeaseBook(() => "inst_a", () => now);
  // Held as a row: the balance is debited by the hold.
  database.sql.run("INSERT INTO ledger (user_id, kind, amount_micros, balance_after_micros, reference, created_at) VALUES ('u1', 'hold', -100, 900, 'req_1', 1)", []);
  database.sql.run("INSERT INTO holds (id, user_id, amount_micros, instance_id, created_at) VALUES ('req_1', 'u1', 100, 'inst_a', 1)", []);
  database.sql.run("UPDATE users SET balance_micros = 900 WHERE id = 'u1'", []);
  // Another instance took this one for dead and refunded the hold.
  database.sql.run("INSERT INTO ledger (user_id, kind, amount_micros, balance_after_micros, reference, created_at) VALUES ('u1', 'refund', 100, 1000, 'req_1', 2)", []);
  database.sql.run("DELETE FROM holds WHERE id = 'req_1'", []);
  database.sql.run("UPDATE users SET balance_micros = 1000 WHERE id = 'u1'", []);
  // The request still finishes here and costs 60: only that is charged.
  settleHolds(database.sql, [{ userId: "u1", requestId: "req_1", hold: { micros: 100, leased: false }, costMicros: 60, startedAt: 1, at: 3 }], leases, []);
  expect(balance()).toBe(940);
  expect(ledgerSum()).toBe(940);
});

test("a batch of leased requests of one account: each gets its hold and settle rows in order, and the lease row ends short by what they spent", async () => {
  const leases = new LeaseBook(() => "inst_a", () => now);
  leases.extend(database.sql, "u1", 600, []);
  for (let i = 0; i < 3; i++) expect(leases.draw("u1", 100)).toBe(true);
  const settled = (n: number, costMicros: number) => ({ userId: "u1", requestId: `req_${n}`, hold: { micros: 100, leased: true }, costMicros, startedAt: n, at: n + 10 });
  // The third costs more than it held: the excess comes from the lease's free part too.
  settleHolds(database.sql, [settled(1, 60), settled(2, 100), settled(3, 150)], leases, []);
  expect(leaseRow()).toEqual({ amount_micros: 600 - 100 - 100 - 150, open: 1 });
  expect(balance()).toBe(1000 - 310);
  expect(ledgerSum()).toBe(balance());
  const rows = await database.db
    .selectFrom("ledger")
    .select(["kind", "amount_micros", "balance_after_micros", "reference"])
    .where("kind", "!=", "topup")
    .orderBy("id")
    .execute();
  expect(rows).toEqual([
    { kind: "hold", amount_micros: -100, balance_after_micros: 900, reference: "req_1" },
    { kind: "settle", amount_micros: 40, balance_after_micros: 940, reference: "req_1" },
    { kind: "hold", amount_micros: -100, balance_after_micros: 840, reference: "req_2" },
    { kind: "settle", amount_micros: 0, balance_after_micros: 840, reference: "req_2" },
    { kind: "hold", amount_micros: -100, balance_after_micros: 740, reference: "req_3" },
    { kind: "settle", amount_micros: -50, balance_after_micros: 690, reference: "req_3" },
  ]);
});

test("a settlement rolled back and tried again releases its draw on the lease once", () => {
  const leases = new LeaseBook(() => "inst_a", () => now);
  leases.extend(database.sql, "u1", 600, []);
  expect(leases.draw("u1", 100)).toBe(true);
  expect(leases.draw("u1", 100)).toBe(true);
  const first = { userId: "u1", requestId: "req_1", hold: { micros: 100, leased: true }, costMicros: 100, startedAt: 1, at: 2 };
  // The first try's transaction is rolled back (a busy database): its journal is undone.
  const journal: Journal = [];
  database.sql.run("SAVEPOINT try", []);
  settleHolds(database.sql, [first], leases, journal);
  database.sql.run("ROLLBACK TO try", []);
  database.sql.run("RELEASE try", []);
  undo(journal);
  settleHolds(database.sql, [first], leases, []);
  // The other request is still in flight: closing keeps its 100 reserved, and gives back the rest.
  expect(leases.close(database.sql, "u1", [])).toBe(600 - 100 - 100);
  expect(leaseRow()).toEqual({ amount_micros: 100, open: 0 });
  expect(ledgerSum()).toBe(balance());
});
