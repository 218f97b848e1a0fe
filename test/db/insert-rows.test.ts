import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { RowInserter } from "../../src/db/insert-rows.ts";

let dir: string;
let database: OpenDatabase | undefined;

afterEach(async () => {
  if (!database) return;
  await database.close();
  database = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A real database with a two-column table, and its SyncSql with every statement text noted. */
function open(): { statements: string[]; run: (rows: unknown[][]) => void } {
  dir = mkdtempSync(join(tmpdir(), "gateway-insert-rows-"));
  const opened = openDatabase(`file:${join(dir, "rows.db")}`);
  database = opened;
  opened.sql.run("CREATE TABLE t (n INTEGER NOT NULL, label TEXT)", []);
  const statements: string[] = [];
  const inserter = new RowInserter("INSERT INTO t (n, label) VALUES (?, ?)");
  const sql = { run: (text: string, params: readonly unknown[]) => (statements.push(text), opened.sql.run(text, params)), get: opened.sql.get };
  return { statements, run: (rows) => inserter.insert(sql, rows) };
}

const stored = () => database!.sql.get<{ all: string | null }>("SELECT group_concat(n || ':' || coalesce(label, '-')) AS \"all\" FROM (SELECT * FROM t ORDER BY rowid)", [])?.all ?? "";

for (const count of [0, 1, 3, 4, 7, 16, 21, 37]) {
  test(`${count} rows are all inserted, in order, each value in its column`, () => {
    const { run } = open();
    const rows = Array.from({ length: count }, (_, i) => [i, i % 5 === 0 ? null : `r${i}`]);
    run(rows);
    expect(stored()).toBe(rows.map(([n, label]) => `${n}:${label ?? "-"}`).join(","));
  });
}

test("37 rows take four statements (two of 16, one of 4, one of 1), not 37", () => {
  const { statements, run } = open();
  run(Array.from({ length: 37 }, (_, i) => [i, "x"]));
  const rowsPerStatement = statements.map((text) => text.split("(?, ?)").length - 1);
  expect(rowsPerStatement).toEqual([16, 16, 4, 1]);
});

test("a text that is not a one-row VALUES insert is refused when the inserter is made", () => {
  expect(() => new RowInserter("INSERT INTO t (n) SELECT 1")).toThrow(/one-row VALUES/);
});
