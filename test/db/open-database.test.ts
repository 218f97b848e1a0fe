import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, WAL_SIZE_LIMIT_BYTES, type OpenDatabase } from "../../src/db/open-database.ts";

let dir: string;
let database: OpenDatabase;
afterEach(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a local database runs in WAL mode with synchronous NORMAL, and its WAL is cut back to 64 MiB when it resets", () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-open-db-"));
  database = openDatabase(`file:${join(dir, "open.db")}`);
  const pragma = (name: string) => Object.values(database.sql.get<Record<string, unknown>>(`PRAGMA ${name}`, [])!)[0];
  expect(pragma("journal_mode")).toBe("wal");
  // 1 is NORMAL: commits survive a killed process, and the WAL is not synced on every commit.
  expect(pragma("synchronous")).toBe(1);
  expect(WAL_SIZE_LIMIT_BYTES).toBe(64 * 1024 * 1024);
  expect(pragma("journal_size_limit")).toBe(WAL_SIZE_LIMIT_BYTES);
});
