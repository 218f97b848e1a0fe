import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseWritable } from "../../src/db/database-writable.ts";
import { watchDatabaseFile } from "../../src/db/watch-database-file.ts";
import { createJsonLogger } from "../../src/lib/logger.ts";
import { fileIdentity } from "../../src/runtime/file-identity.ts";
import { killAllSpawned, spawnGateway, waitFor } from "../billing/_support.ts";
import { chat, newKey, serveModel } from "../limits/_processes.ts";

/**
 * SQLite keeps writing to a database file removed or replaced under it, without an error, and
 * the next start opens an empty or older one: every usage row and charge in between is lost.
 * Each heartbeat checks the file is still the one opened; when it is not, model requests are
 * refused (503) until a restart, and the log says why once.
 */

const dir = mkdtempSync(join(tmpdir(), "database-file-lost-"));
afterAll(async () => {
  await killAllSpawned();
  rmSync(dir, { recursive: true, force: true });
});

/** A watch of a fresh file in the test's folder, with what it logs. */
function watched(name: string) {
  const path = join(dir, name);
  writeFileSync(path, "database");
  const lines: string[] = [];
  const writable = new DatabaseWritable(createJsonLogger((line) => lines.push(line), Date.now));
  return { path, lines, writable, check: watchDatabaseFile(path, fileIdentity, writable) };
}

test("while the file is the one opened, requests go on", () => {
  const { writable, check, lines } = watched("kept.db");
  check();
  check();
  expect(() => writable.assertOpen()).not.toThrow();
  expect(lines).toEqual([]);
});

test("a removed file, or another put in its place, refuses requests with a 503, said once in the log", () => {
  for (const [name, change] of [
    ["removed.db", (path: string) => rmSync(path)],
    ["replaced.db", (path: string) => (writeFileSync(`${path}.restored`, "older"), renameSync(`${path}.restored`, path))],
  ] as const) {
    const { path, writable, check, lines } = watched(name);
    change(path);
    check();
    check();
    expect(() => writable.assertOpen()).toThrow("The gateway cannot write to its database; retry later");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", message: expect.stringContaining(`database lost: `) });
    expect(lines[0]).toContain(path);
    // A write that goes through (the heartbeat's, to the removed file) does not open it again.
    writable.succeeded();
    expect(() => writable.assertOpen()).toThrow();
  }
});

test("a stat that fails for another reason than a missing file (a folder made unsearchable) is no verdict, and does not throw", () => {
  const { writable, lines } = watched("unsearchable.db");
  let failing = false;
  const identityOf = (path: string) => {
    if (failing) throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    return fileIdentity(path);
  };
  const check = watchDatabaseFile(join(dir, "unsearchable.db"), identityOf, writable);
  failing = true;
  expect(() => check()).not.toThrow();
  expect(() => writable.assertOpen()).not.toThrow();
  expect(lines).toEqual([]);
});

test("a gateway whose database file is removed while it runs answers model requests 503 within a heartbeat", async () => {
  const gateway = await spawnGateway(join(dir, "process"));
  await serveModel(gateway);
  const { key } = await newKey(gateway, "enterprise");
  expect((await chat(gateway, key)).status).toBe(200);
  rmSync(join(dir, "process", "gateway.db"));
  await waitFor("a 503 after the next heartbeat", async () => (await chat(gateway, key)).status === 503, 7_000);
  expect(gateway.output()).toContain("database lost: the database file");
}, 15_000);
