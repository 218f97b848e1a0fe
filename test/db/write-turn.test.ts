import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import type { SyncSql } from "../../src/db/sync-sql.ts";
import { TurnBatch, WriteTurn, type BatchOutcome } from "../../src/db/write-turn.ts";

let dir: string;
let database: OpenDatabase;

/** A real database, and its SyncSql with every statement text noted as it runs. */
function open(): { turn: WriteTurn; statements: string[]; sql: SyncSql } {
  dir = mkdtempSync(join(tmpdir(), "gateway-write-turn-"));
  database = openDatabase(`file:${join(dir, "turn.db")}`);
  database.sql.run("CREATE TABLE t (v INTEGER NOT NULL)", []);
  const statements: string[] = [];
  const sql: SyncSql = {
    run: (text, params) => {
      statements.push(text);
      return database.sql.run(text, params);
    },
    get: (text, params) => database.sql.get(text, params),
  };
  return { turn: new WriteTurn(database.db, sql), statements, sql };
}

const values = () => database.sql.get<{ all: string | null }>("SELECT group_concat(v) AS \"all\" FROM (SELECT v FROM t ORDER BY v)", [])?.all ?? "";

afterEach(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

test("jobs queued in one turn share one transaction and commit in order", async () => {
  const { turn, statements } = open();
  await Promise.all([1, 2, 3].map((v) => turn.run((sql) => sql.run("INSERT INTO t (v) VALUES (?)", [v]))));
  expect(values()).toBe("1,2,3");
  expect(statements.filter((s) => s === "BEGIN IMMEDIATE")).toHaveLength(1);
  expect(statements.filter((s) => s === "COMMIT")).toHaveLength(1);
});

test("a job that throws is undone alone; the others of its turn commit", async () => {
  const { turn } = open();
  const results = await Promise.allSettled([
    turn.run((sql) => sql.run("INSERT INTO t (v) VALUES (1)", [])),
    turn.run((sql) => {
      sql.run("INSERT INTO t (v) VALUES (2)", []);
      throw new Error("this job fails after writing");
    }),
    turn.run((sql) => sql.run("INSERT INTO t (v) VALUES (3)", [])),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(String((results[1] as PromiseRejectedResult).reason)).toContain("this job fails");
  expect(values()).toBe("1,3");
});

test("a lone job that throws is rolled back and rejects", async () => {
  const { turn } = open();
  await expect(
    turn.run((sql) => {
      sql.run("INSERT INTO t (v) VALUES (7)", []);
      throw new Error("lone failure");
    }),
  ).rejects.toThrow("lone failure");
  expect(values()).toBe("");
  // The connection is usable afterwards.
  await turn.run((sql) => sql.run("INSERT INTO t (v) VALUES (8)", []));
  expect(values()).toBe("8");
});

test("jobs queued in a later turn get their own transaction; idle waits for all queued so far", async () => {
  const { turn, statements } = open();
  const first = turn.run((sql) => sql.run("INSERT INTO t (v) VALUES (1)", []));
  await first;
  turn.add({ run: (sql) => sql.run("INSERT INTO t (v) VALUES (2)", []), done: () => {} });
  await turn.idle();
  expect(values()).toBe("1,2");
  expect(statements.filter((s) => s === "COMMIT")).toHaveLength(2);
  // Nothing queued: idle resolves without a transaction.
  await turn.idle();
  expect(statements.filter((s) => s === "BEGIN IMMEDIATE")).toHaveLength(2);
});

test("a TurnBatch writes the items pushed in one turn with one job, and a later push starts the next", async () => {
  const { turn, statements } = open();
  const outcomes: { items: number[]; outcome: BatchOutcome<number> }[] = [];
  const batch = new TurnBatch<number, number>(
    turn,
    (sql, items) => {
      for (const v of items) sql.run("INSERT INTO t (v) VALUES (?)", [v]);
      if (items.includes(99)) throw new Error("99 is refused");
      return items.length;
    },
    (items, outcome) => outcomes.push({ items: [...items], outcome }),
  );
  batch.push(1);
  batch.push(2);
  batch.push(3);
  await turn.idle();
  batch.push(4);
  batch.push(99);
  await turn.idle();
  expect(outcomes[0]).toEqual({ items: [1, 2, 3], outcome: { ok: true, result: 3 } });
  expect(outcomes[1]!.items).toEqual([4, 99]);
  expect(outcomes[1]!.outcome.ok).toBe(false);
  // The failed job was undone; the turn itself committed (idle's own empty job shared it).
  expect(values()).toBe("1,2,3");
  expect(statements.filter((s) => s === "BEGIN IMMEDIATE")).toHaveLength(2);
  expect(statements.filter((s) => s === "ROLLBACK TO turn_job")).toHaveLength(1);
});

test("a job's journal is undone at once when its savepoint rolls back, and kept when it commits", async () => {
  const { turn } = open();
  const memory = { count: 0 };
  const seenBySecondJob: number[] = [];
  const results = await Promise.allSettled([
    turn.run((sql, journal) => {
      sql.run("INSERT INTO t (v) VALUES (1)", []);
      memory.count += 10;
      journal.push(() => (memory.count -= 10));
      throw new Error("after changing memory");
    }),
    // Runs in the same transaction, after the failed job: memory must already be undone.
    turn.run((sql, journal) => {
      seenBySecondJob.push(memory.count);
      sql.run("INSERT INTO t (v) VALUES (2)", []);
      memory.count += 1;
      journal.push(() => (memory.count -= 1));
    }),
  ]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
  expect(seenBySecondJob).toEqual([0]);
  expect(memory.count).toBe(1);
  expect(values()).toBe("2");
});

/**
 * A table `child` whose foreign key is checked only at COMMIT: a job inserting
 * `child (parent_id) VALUES (n)` runs fine, and the commit of its transaction fails.
 */
function createDeferredForeignKey(): void {
  database.sql.run("PRAGMA foreign_keys = ON", []);
  database.sql.run("CREATE TABLE parent (id INTEGER PRIMARY KEY)", []);
  database.sql.run("CREATE TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)", []);
}

test("when the commit itself fails, every job's journal is undone before any other code runs", async () => {
  const { turn } = open();
  createDeferredForeignKey();
  const memory = { count: 0 };
  const observed: number[] = [];
  const jobs = [1, 2].map((v) =>
    turn.run((sql, journal) => {
      sql.run("INSERT INTO t (v) VALUES (?)", [v]);
      if (v === 2) sql.run("INSERT INTO child (parent_id) VALUES (42)", []);
      memory.count += v;
      journal.push(() => (memory.count -= v));
      // The first code to run after the transaction: a microtask queued inside it.
      if (v === 2) queueMicrotask(() => observed.push(memory.count));
    }),
  );
  const results = await Promise.allSettled(jobs);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
  expect(observed).toEqual([0]);
  expect(memory.count).toBe(0);
  expect(values()).toBe("");
});

test("journals of a failed commit are undone newest job first, so values restored outright come back right", async () => {
  const { turn } = open();
  createDeferredForeignKey();
  let state = "open";
  const set = (value: string) => (sql: SyncSql, journal: (() => void)[]) => {
    const before = state;
    state = value;
    journal.push(() => (state = before));
    if (value === "reopened") sql.run("INSERT INTO child (parent_id) VALUES (7)", []);
  };
  const results = await Promise.allSettled([turn.run(set("closed")), turn.run(set("reopened"))]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(state).toBe("open");
});
