import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { PriceStore } from "../../src/pricing/price-store.ts";
import type { PriceRow } from "../../src/db/schema.ts";

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
  await expect(migrate(db, () => 4)).rejects.toThrow(/newer gateway.*999-from-the-future/);
});

test("the embedded database runs in WAL mode with a busy timeout", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
  expect(mode.rows[0]!.journal_mode).toBe("wal");
  const timeout = await sql<Record<string, number>>`pragma busy_timeout`.execute(db);
  expect(Object.values(timeout.rows[0]!)[0]).toBeGreaterThan(0);
});

test("004 keeps every ledger row and open hold, and new ledger ids continue after the old ones", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  const before004 = MIGRATIONS.filter((m) => m.id < "004");
  await migrate(db, () => 1, before004);
  await db.insertInto("users").values({ id: "usr_a", email: "a@example.com", plan: "free", status: "active", balance_micros: 70, total_spent_micros: 0, created_at: 1, updated_at: 1 }).execute();
  await db.insertInto("ledger").values([
    { user_id: "usr_a", kind: "topup", amount_micros: 100, balance_after_micros: 100, reference: "txn_1", created_at: 1 },
    { user_id: "usr_a", kind: "hold", amount_micros: -30, balance_after_micros: 70, reference: "req_1", created_at: 2 },
  ]).execute();
  await db.insertInto("holds").values({ id: "req_1", user_id: "usr_a", amount_micros: 30, instance_id: "inst_x", created_at: 2 }).execute();

  expect(await migrate(db, () => 3, MIGRATIONS.filter((m) => m.id < "005"))).toEqual(["004-lean-billing-tables"]);

  const ledger = await db.selectFrom("ledger").selectAll().orderBy("id").execute();
  expect(ledger.map((r) => [r.id, r.kind, r.amount_micros, r.balance_after_micros, r.reference])).toEqual([
    [1, "topup", 100, 100, "txn_1"],
    [2, "hold", -30, 70, "req_1"],
  ]);
  expect(await db.selectFrom("holds").selectAll().execute()).toEqual([
    { id: "req_1", user_id: "usr_a", amount_micros: 30, instance_id: "inst_x", created_at: 2 },
  ]);
  await db.insertInto("ledger").values({ user_id: "usr_a", kind: "refund", amount_micros: 30, balance_after_micros: 100, reference: "req_1", created_at: 4 }).execute();
  expect((await db.selectFrom("ledger").select("id").orderBy("id", "desc").executeTakeFirstOrThrow()).id).toBe(3);

  const schema = await sql<{ name: string; sql: string | null }>`select name, sql from sqlite_master`.execute(db);
  const byName = new Map(schema.rows.map((r) => [r.name, r.sql ?? ""]));
  expect(byName.get("holds")).toMatch(/without rowid/i);
  expect(byName.get("ledger")).not.toMatch(/autoincrement/i);
  expect(byName.has("ledger_user_id")).toBe(true);
  expect(byName.has("ledger_reference")).toBe(false);
  expect(byName.has("holds_instance_id")).toBe(false);
  // The ledger still refuses a row for an account that does not exist.
  await expect(db.insertInto("ledger").values({ user_id: "usr_missing", kind: "adjust", amount_micros: 1, balance_after_micros: 1, reference: null, created_at: 5 }).execute()).rejects.toThrow(/FOREIGN KEY/i);
});

test("005 keeps every usage row, keyed newest-last by (created_at, id), and drops the write-only ledger index", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  await migrate(db, () => 1, MIGRATIONS.filter((m) => m.id < "005"));
  const row = (id: string, userId: string, createdAt: number) => ({
    id, request_id: `req_${id}`, user_id: userId, token_id: "tok_1", model: "m", endpoint: "/v1/chat/completions",
    prompt_tokens: 3, completion_tokens: 4, cost_micros: 7, status: 200, latency_ms: 9, channel_id: null, stream: 0, created_at: createdAt,
  });
  const rows = [row("use_b", "usr_a", 20), row("use_a", "usr_b", 20), row("use_c", "usr_a", 10)];
  await db.insertInto("usage_logs").values(rows).execute();

  expect(await migrate(db, () => 2, MIGRATIONS.filter((m) => m.id < "006"))).toEqual(["005-clustered-usage-log"]);

  const after = await db.selectFrom("usage_logs").selectAll().orderBy("created_at", "desc").orderBy("id", "desc").execute();
  expect(after).toEqual(rows); // listed newest first, ties by id descending
  const plan = await sql<{ detail: string }>`explain query plan select * from usage_logs where user_id = 'usr_a' order by created_at desc`.execute(db);
  expect(plan.rows.map((r) => r.detail).join(" ")).toMatch(/usage_logs_user_created/);

  const schema = await sql<{ name: string; sql: string | null }>`select name, sql from sqlite_master`.execute(db);
  const byName = new Map(schema.rows.map((r) => [r.name, r.sql ?? ""]));
  expect(byName.get("usage_logs")).toMatch(/without rowid/i);
  expect(byName.has("usage_logs_created_at")).toBe(false);
  expect(byName.has("ledger_user_id")).toBe(false);
});

test("014 counts the usage rows already there by UTC day, and its triggers count those written and deleted after", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  await migrate(db, () => 1, MIGRATIONS.filter((m) => m.id < "014"));
  const day = 86_400_000;
  const row = (id: string, createdAt: number) => ({
    id, request_id: `req_${id}`, user_id: "usr_a", token_id: "tok_1", model: "m", endpoint: "/v1/chat/completions",
    prompt_tokens: 3, completion_tokens: 4, cost_micros: 7, status: 200, latency_ms: 9, channel_id: null, stream: 0, created_at: createdAt,
  });
  await db.insertInto("usage_logs").values([row("use_a", 20_000 * day), row("use_b", 20_001 * day - 1), row("use_c", 20_001 * day)]).execute();

  expect(await migrate(db, () => 2, MIGRATIONS.filter((m) => m.id < "015"))).toEqual(["014-usage-days"]);
  const counts = () => db.selectFrom("usage_days").selectAll().orderBy("day").execute();
  expect(await counts()).toEqual([{ day: 20_000, rows: 2 }, { day: 20_001, rows: 1 }]);

  await db.insertInto("usage_logs").values([row("use_d", 20_001 * day + 5), row("use_e", 20_002 * day)]).execute();
  await db.deleteFrom("usage_logs").where("id", "=", "use_a").execute();
  expect(await counts()).toEqual([{ day: 20_000, rows: 1 }, { day: 20_001, rows: 2 }, { day: 20_002, rows: 1 }]);
});

test("019 keys kept thinking by owner and call id, keeps the rows there, and a lookup reads the key", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  await migrate(db, () => 1, MIGRATIONS.filter((m) => m.id < "019"));
  const row = { tool_call_id: "toolu_1", user_id: "usr_a", expires_at: 5, blocks_json: '[{"type":"redacted_thinking","data":"Em"}]' };
  await db.insertInto("kept_thinking").values(row).execute();

  expect(await migrate(db, () => 2, MIGRATIONS.filter((m) => m.id < "020"))).toEqual(["019-kept-thinking-by-owner"]);
  expect(await db.selectFrom("kept_thinking").selectAll().execute()).toEqual([row]);
  await db.insertInto("kept_thinking").values({ ...row, user_id: "usr_b" }).execute();
  await expect(db.insertInto("kept_thinking").values(row).execute()).rejects.toThrow(/UNIQUE/i);
  const plan = await sql<{ detail: string }>`explain query plan select blocks_json from kept_thinking
    where user_id = 'usr_a' and tool_call_id in (select value from json_each('["toolu_1","toolu_2"]'))`.execute(db);
  expect(plan.rows.map((r) => r.detail).join(" ")).toMatch(/USING INDEX sqlite_autoindex_kept_thinking_1 \(user_id=\? AND tool_call_id=\?\)/);
});

test("020 keeps every stored price, each without a long-prompt tier, and the store serves them as before", async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-migrate-"));
  const { db } = open();
  await migrate(db, () => 1, MIGRATIONS.filter((m) => m.id < "020"));
  const unset = { per_image_micros: null, per_1k_characters_micros: null, per_minute_micros: null, per_1k_documents_micros: null, per_1k_searches_micros: null, per_1k_web_searches_micros: null };
  // Rows as the table held them before 020, which had no long_prompt_json.
  const rows: Omit<PriceRow, "long_prompt_json">[] = [
    { model: "acme-chat", mode: "chat", input_per_million_micros: 3_000_000, output_per_million_micros: 15_000_000, cached_input_per_million_micros: 300_000, cache_write_per_million_micros: 3_750_000, cache_write_1h_per_million_micros: 6_000_000, ...unset, image_prices_json: null, updated_at: 7 },
    { model: "acme-image", mode: "image", input_per_million_micros: null, output_per_million_micros: null, cached_input_per_million_micros: null, cache_write_per_million_micros: null, cache_write_1h_per_million_micros: null, ...unset, per_image_micros: 40_000, image_prices_json: '{"1024x1024/hd":80000}', updated_at: 8 },
  ];
  await db.insertInto("prices").values(rows as PriceRow[]).execute();

  expect(await migrate(db, () => 2, MIGRATIONS)).toEqual(["020-long-prompt-prices"]);
  expect(await db.selectFrom("prices").selectAll().orderBy("model").execute()).toEqual(rows.map((row) => ({ ...row, long_prompt_json: null })));
  const store = new PriceStore(db);
  await store.load();
  expect(store.get("acme-chat")).toMatchObject({ inputPerMillion: 3_000_000, cacheWrite1hPerMillion: 6_000_000, longPrompt: null });
  expect(store.get("acme-image")).toMatchObject({ perImage: 40_000, imagePrices: { "1024x1024/hd": 80_000 }, longPrompt: null });
});
