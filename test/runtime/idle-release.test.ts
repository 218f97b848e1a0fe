import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runGateway } from "../../src/boot.ts";
import { testRuntimeHost } from "../helpers/runtime-host.ts";
import { sleep } from "../helpers/common.ts";

test("the started gateway gives back what start-up left before its first request, then runs one full collection after a burst, once traffic stops", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-idle-"));
  let collections = 0;
  let shrinks = 0;
  const { host, shutdown } = testRuntimeHost(dir, { memory: { collect: () => (collections += 1), shrink: () => (shrinks += 1) } });
  const server = await runGateway(host);
  try {
    expect([collections, shrinks]).toEqual([0, 1]);
    for (let i = 0; i < 50; i++) expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
    // Requests keep arriving for 1.2 s, more than two 500 ms ticks: no release meanwhile.
    const busyUntil = Date.now() + 1_200;
    while (Date.now() < busyUntil) {
      await fetch(`http://127.0.0.1:${server.port}/health`);
      await sleep(20);
    }
    expect(collections).toBe(0);
    await sleep(1_300); // at least one whole quiet tick
    expect(collections).toBe(1);
    await sleep(1_100); // quiet goes on: compiled code is kept until 30 s of it
    expect([collections, shrinks]).toEqual([1, 1]);
  } finally {
    expect(await shutdown()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
