import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { AUTOMATIC_CHECKPOINT_PAGES, checkpointOffTheLoop, type CheckpointWorker, type WalCheckpointer } from "../../src/db/wal-checkpointer.ts";
import type { CheckpointerMessage, CheckpointerReport } from "../../src/db/checkpointer-messages.ts";
import type { Logger } from "../../src/lib/logger.ts";

let dir: string;
let database: OpenDatabase;
let checkpointer: WalCheckpointer | undefined;
const warnings: { message: string; reason: unknown }[] = [];
const log: Logger = { info() {}, error() {}, warn: (message, fields) => warnings.push({ message, reason: fields?.reason }) };

function open(): string {
  dir = mkdtempSync(join(tmpdir(), "gateway-checkpointer-"));
  const path = join(dir, "gateway.db");
  database = openDatabase(`file:${path}`);
  return path;
}

const automaticCheckpoint = () => database.sql.get<{ wal_autocheckpoint: number }>("PRAGMA wal_autocheckpoint", [])!.wal_autocheckpoint;
const realWorker = () => new Worker(new URL("../../src/db/checkpoint-worker.ts", import.meta.url).href) as unknown as CheckpointWorker;

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !condition(); await Bun.sleep(20)) if (Date.now() > end) throw new Error("condition not met in time");
}

afterEach(async () => {
  checkpointer?.stop();
  checkpointer = undefined;
  warnings.length = 0;
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the worker checkpoints the WAL while the gateway's connection no longer does, and hands it back when stopped", async () => {
  const path = open();
  expect(automaticCheckpoint()).toBe(AUTOMATIC_CHECKPOINT_PAGES);
  checkpointer = await checkpointOffTheLoop(realWorker(), path, database.setAutomaticCheckpoint, log);
  expect(automaticCheckpoint()).toBe(0);
  database.sql.run("CREATE TABLE rows (id INTEGER PRIMARY KEY, text TEXT NOT NULL)", []);
  for (let i = 0; i < 200; i++) database.sql.run("INSERT INTO rows (text) VALUES (?)", ["x".repeat(4000)]);
  // Copied by the worker: nothing on this connection checkpoints any more.
  await until(() => checkpointer!.copies > 0);
  expect(warnings).toEqual([]);
  checkpointer.stop();
  expect(automaticCheckpoint()).toBe(AUTOMATIC_CHECKPOINT_PAGES);
});

test("a worker that cannot open the database leaves the automatic checkpoint on, and says why", async () => {
  open();
  checkpointer = await checkpointOffTheLoop(realWorker(), join(dir, "missing-folder", "gateway.db"), database.setAutomaticCheckpoint, log);
  expect(automaticCheckpoint()).toBe(AUTOMATIC_CHECKPOINT_PAGES);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]!.message).toBe("WAL checkpoints are back on the event loop");
  expect(String(warnings[0]!.reason)).not.toBe("");
});

/** A worker that starts, then fails as a crashed thread does: its error event. */
class FailingLaterWorker implements CheckpointWorker {
  onmessage: ((event: MessageEvent<CheckpointerReport>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  terminated = false;
  postMessage(message: CheckpointerMessage): void {
    if (message.type === "start") queueMicrotask(() => this.onmessage?.(new MessageEvent("message", { data: { type: "ready" } })));
  }
  fail(): void {
    this.onerror?.(new ErrorEvent("error", { message: "worker thread crashed" }));
  }
  terminate(): void {
    this.terminated = true;
  }
}

test("a worker that fails after it started gives the checkpoints back to the gateway's connection", async () => {
  const path = open();
  const worker = new FailingLaterWorker();
  checkpointer = await checkpointOffTheLoop(worker, path, database.setAutomaticCheckpoint, log);
  expect(automaticCheckpoint()).toBe(0);
  worker.fail();
  expect(automaticCheckpoint()).toBe(AUTOMATIC_CHECKPOINT_PAGES);
  expect(worker.terminated).toBe(true);
  expect(warnings).toEqual([{ message: "WAL checkpoints are back on the event loop", reason: "worker thread crashed" }]);
});
