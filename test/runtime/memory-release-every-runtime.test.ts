/**
 * Every runtime's entry gives memory back once traffic stops: Node and Deno had no release
 * (RuntimeHost.memory left out), so after a soak their RSS stayed at its peak, 100 MB and more
 * above the start, for as long as the gateway stood idle. The gateway logs each release.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAllSpawned, spawnGateway, waitFor } from "../billing/_support.ts";
import { buildNodeBundle, gatewayCommand, RUNTIMES } from "../helpers/runtimes.ts";

const dir = mkdtempSync(join(tmpdir(), "gateway-release-"));

beforeAll(() => buildNodeBundle());
afterAll(async () => {
  await killAllSpawned();
  rmSync(dir, { recursive: true, force: true });
});

test.each(RUNTIMES)("under %s, the first quiet tick after some requests runs a full collection", async (runtime) => {
  const gateway = await spawnGateway(join(dir, runtime), {}, 30_000, gatewayCommand(runtime));
  for (let i = 0; i < 20; i++) expect((await gateway.fetch("/v1/models", { headers: { authorization: "Bearer sk-gw-unknown" } })).status).toBe(401);
  // The reclaimer ticks every 500 ms; the first tick with no request started collects.
  await waitFor("the release", () => gateway.output().includes('"message":"memory released","strength":"collect"'), 5_000);
  expect(await gateway.stop()).toBe(0);
}, 60_000);
