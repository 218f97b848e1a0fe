import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runGateway, type RuntimeHost } from "../../src/boot.ts";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";
import { sleep } from "../helpers/common.ts";

test("the started gateway runs one full collection after a burst of requests, once traffic stops", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-idle-"));
  let collections = 0;
  let shrinks = 0;
  let shutdown: ((signal: string) => void) | undefined;
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => (exited = resolve));
  let stopServer: () => void = () => {};
  const host: RuntimeHost = {
    env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "g.db")}`, GATEWAY_DEMO: "0", GATEWAY_MANAGEMENT_KEY: "mk-gw-idle-test-key-0123456789" },
    ensureDirectory: () => {},
    async serve(fetch, { port, host: hostname }) {
      const server = Bun.serve({ fetch, port, hostname });
      stopServer = () => server.stop(true);
      return { port: server.port ?? port, close: async () => stopServer() };
    },
    onShutdownSignal: (handler) => (shutdown = handler),
    exit: (code) => exited(code),
    write: () => {},
    identity: { host: "test", pid: process.pid, isAlive: () => true },
    createTempUpload: () => createTempUpload(),
    memory: { collect: () => (collections += 1), shrink: () => (shrinks += 1) },
  };
  const server = await runGateway(host);
  try {
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
    expect([collections, shrinks]).toEqual([1, 0]);
  } finally {
    shutdown?.("SIGTERM");
    expect(await exit).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
