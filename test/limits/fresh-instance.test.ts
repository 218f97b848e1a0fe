import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAllSpawned, spawnGateway, waitFor, waitUntilServing, type GatewayProcess } from "../billing/_support.ts";
import { chat, exchanged, expectFreePlanRefused, MODEL, newKey, rateRow, readFile, serveModel, type Key } from "./_processes.ts";

/**
 * A gateway process that starts does not begin with empty windows: one restarted gracefully
 * (SIGTERM, as a deploy does) begins from the windows it wrote as it stopped, and one joining
 * an instance that was alone from the windows that one wrote. A lone process killed with
 * SIGKILL leaves the windows of its last exchange, and the next one begins from them.
 * Exchanges are waited for through a probe key (see _processes.ts).
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "limits-fresh-instance-"));
});
afterEach(async () => {
  await killAllSpawned();
  rmSync(dir, { recursive: true, force: true });
});

/** A process serving the mock model, and a free-plan key whose 10 requests it has admitted. */
async function drainedOnNewProcess(): Promise<{ gw: GatewayProcess; free: Key }> {
  const gw = await spawnGateway(dir);
  await serveModel(gw);
  const free = await newKey(gw, "free");
  for (let i = 0; i < 10; i++) expect((await chat(gw, free.key)).status).toBe(200);
  return { gw, free };
}

test("a gateway restarted gracefully refuses the 11th request of a free-plan key it served 10", async () => {
  const { gw, free } = await drainedOnNewProcess();
  expect(await gw.stop()).toBe(0);
  const restarted = await spawnGateway(dir);
  await expectFreePlanRefused(await chat(restarted, free.key));
}, 30_000);

test("a gateway alone killed with SIGKILL after its exchange leaves its windows: the next one refuses the 11th request", async () => {
  const { gw, free } = await drainedOnNewProcess();
  // Alone, it writes what it admitted at its next poll.
  await waitFor("the lone gateway's window of the drained key", () => rateRow(dir, gw, free.bucket)?.requests === 10);
  await gw.kill9();
  const restarted = await spawnGateway(dir);
  await expectFreePlanRefused(await chat(restarted, free.key));
}, 30_000);

test("a process joining one that was alone refuses a key the other drained, from its start", async () => {
  const { gw: a, free } = await drainedOnNewProcess();
  const probe = await newKey(a, "enterprise");
  await waitFor("a's window of the drained key", () => rateRow(dir, a, free.bucket)?.requests === 10);
  const b = await spawnGateway(dir);
  await waitUntilServing(b, MODEL, probe.key);
  await expectFreePlanRefused(await chat(b, free.key));
}, 30_000);
