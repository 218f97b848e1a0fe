import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { fakeProcesses, whenFeedSees } from "./_inprocess.ts";

/**
 * Whether another instance shares the database (InstanceRegistry.alone), which work only
 * instances sharing one needs asks first: known at start, within one poll of the change feed
 * after another instance registers or retires, and at the heartbeat that finds one dead.
 * Registering, retiring and being found dead bump a counter the feed polls with the one it had.
 */

const processes = fakeProcesses("instances-changed-host");
const started: TestGateway[] = [];
async function start(pid: number, dir?: string): Promise<TestGateway> {
  const gw = await startTestGateway({ dir, identity: processes.identity(pid) });
  started.push(gw);
  return gw;
}
afterAll(async () => {
  for (const gw of started) await gw.close({ keepFiles: true }).catch(() => {});
  rmSync(started[0]!.dir, { recursive: true, force: true });
});

test("an instance learns within a poll that another started and that it retired, and at a heartbeat that one died", async () => {
  const a = await start(4_200_001);
  expect(a.services.instance.alone).toBe(true);

  const b = await start(4_200_002, a.dir);
  expect(b.services.instance.alone).toBe(false);
  await whenFeedSees(a, false);

  await b.services.instance.retire();
  await whenFeedSees(a, true);

  const c = await start(4_200_003, a.dir);
  await whenFeedSees(a, false);
  // `c` dies without retiring: the next heartbeat of `a` finds its pid gone.
  processes.end(c.services.identity.pid);
  await a.services.instance.heartbeat();
  expect(a.services.instance.alone).toBe(true);
});
