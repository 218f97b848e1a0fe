import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";

let dir: string;
let opened: OpenDatabase[] = [];
const open = () => {
  const database = openDatabase(`file:${join(dir, "gateway.db")}`);
  opened.push(database);
  return database;
};

afterEach(async () => {
  for (const database of opened) await database.close();
  opened = [];
  rmSync(dir, { recursive: true, force: true });
});

test("migrations apply once, are recorded, and a second run changes nothing", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  const first = await migrate(db, () => 1);
  expect(first).toEqual(MIGRATIONS.map((m) => m.id));
  expect(await migrate(db, () => 2)).toEqual([]);
  const recorded = await db.selectFrom("schema_migrations").selectAll().execute();
  expect(recorded.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
  const names = tables.rows.map((r) => r.name);
  for (const table of ["users", "tokens", "channels", "prices", "ledger", "usage_logs", "settings", "idempotency_records"]) {
    expect(names).toContain(table);
  }
});

test("a database migrated by a newer gateway is refused with a clear message", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  await migrate(db, () => 1);
  await db.insertInto("schema_migrations").values({ id: "999-from-the-future", applied_at: 3 }).execute();
  expect(migrate(db, () => 4)).rejects.toThrow(/newer gateway.*999-from-the-future/);
});

test("the embedded database runs in WAL mode with a busy timeout", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
  expect(mode.rows[0]!.journal_mode).toBe("wal");
  const timeout = await sql<Record<string, number>>`pragma busy_timeout`.execute(db);
  expect(Object.values(timeout.rows[0]!)[0]).toBeGreaterThan(0);
});
