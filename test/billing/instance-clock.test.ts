import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { InstanceRegistry, type ProcessIdentity } from "../../src/billing/instance-registry.ts";

/**
 * Instances sharing a database take one another for dead by a heartbeat that stopped moving,
 * measured on each process's own clock once it has looked: a step of the wall clock (NTP, a VM
 * resumed), which ages every heartbeat at once, drops no live instance's holds and leases.
 * On the first look, as at a start after a crash, the heartbeat's age on the wall clock tells.
 */

const started: TestGateway[] = [];
afterAll(async () => {
  for (const gw of started) await gw.close({ keepFiles: true }).catch(() => {});
  for (const dir of new Set(started.map((gw) => gw.dir))) rmSync(dir, { recursive: true, force: true });
});

/** A process elsewhere: its pid says nothing here. */
const elsewhere = (pid: number): ProcessIdentity => ({ host: `other-host-${pid}`, pid, isAlive: () => null });
const instanceIds = async (gw: TestGateway) => (await gw.database.db.selectFrom("instances").select("id").execute()).map((row) => row.id).sort();

test("a step of the wall clock forward takes no live instance for dead", async () => {
  let wall = Date.now();
  const a = await startTestGateway({ now: () => wall, identity: elsewhere(4_400_001) });
  started.push(a);
  const b = await startTestGateway({ dir: a.dir, now: () => wall, identity: elsewhere(4_400_002) });
  started.push(b);
  await a.services.instance.heartbeat();
  const both = [a.services.instance.id, b.services.instance.id].sort();
  expect(await instanceIds(a)).toEqual(both);
  // A minute's step forward: b's last heartbeat now reads a minute old.
  wall += 60_000;
  expect(await a.services.instance.heartbeat()).toBe(0);
  expect(await instanceIds(a)).toEqual(both);
  expect(a.services.instance.alone).toBe(false);
});

test("a heartbeat that stops moving for 15 s of a process's own clock is a dead instance; on a first look its wall-clock age tells", async () => {
  const gw = await startTestGateway({ identity: elsewhere(4_400_010) });
  started.push(gw);
  let wall = Date.now();
  let own = 0;
  const watcher = new InstanceRegistry(gw.database.db, elsewhere(4_400_011), () => wall, { monotonicNow: () => own });
  const quiet = new InstanceRegistry(gw.database.db, elsewhere(4_400_012), () => wall);
  await watcher.register();
  await quiet.register();
  await watcher.releaseOrphanedHolds();
  // The wall clock says a minute has passed, but the watcher's own clock says a second: alive.
  wall += 60_000;
  own += 1_000;
  await watcher.releaseOrphanedHolds();
  expect(await instanceIds(gw)).toContain(quiet.id);
  // 15 s of its own clock without a beat: dead, whatever the wall clock says.
  wall -= 60_000;
  own += 15_001;
  await watcher.releaseOrphanedHolds();
  expect(await instanceIds(gw)).not.toContain(quiet.id);

  // A newcomer's first look at a record whose heartbeat is 16 s old by the wall clock: dead at once.
  const stale = new InstanceRegistry(gw.database.db, elsewhere(4_400_013), () => wall - 16_000);
  await stale.register();
  const newcomer = new InstanceRegistry(gw.database.db, elsewhere(4_400_014), () => wall);
  await newcomer.register();
  await newcomer.releaseOrphanedHolds();
  expect(await instanceIds(gw)).not.toContain(stale.id);
});
