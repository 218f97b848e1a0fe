/**
 * The gateway's command line as an operator meets it: `gateway` serves, `gateway doctor`
 * checks, anything else is refused; a start that fails after the first-start set-up still
 * shows the keys it made.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAllSpawned, runCli, spawnGateway } from "../billing/_support.ts";

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-cli-"));
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  await killAllSpawned();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("an unknown command is refused with exit code 1, not served", async () => {
  // A typo of `doctor` used to start a gateway; on loopback with an OS-chosen port here, and
  // bounded, so the old behaviour shows as a process killed at the timeout.
  const run = await runCli(newDir(), ["doctr"], { PORT: "0", HOST: "127.0.0.1", GATEWAY_DEMO: "0" }, 4_000);
  expect(run.code).toBe(1);
  expect(run.stdout).toContain("unknown command 'doctr'");
  expect(run.stdout).not.toContain("gateway listening");
}, 10_000);

test("a first start whose port is taken still shows the management key it made, and the key works on the next start", async () => {
  const blocker = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("taken") });
  const dir = newDir();
  try {
    const failed = await runCli(dir, [], { PORT: String(blocker.port), HOST: "127.0.0.1", GATEWAY_MANAGEMENT_KEY: "" }, 10_000);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("failed to start");
    const key = /Management key \(shown once, keep it safe\): (mk-gw-\w+)/.exec(failed.stdout)?.[1];
    expect(key).toBeDefined();
    expect(failed.stdout).toMatch(/Demo API key \(shown once\): sk-gw-\w+/);

    const second = await spawnGateway(dir, { GATEWAY_MANAGEMENT_KEY: "" });
    expect(second.output()).not.toContain("first start");
    const settings = await second.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${key}` } });
    expect(settings.status).toBe(200);
    expect(await second.stop()).toBe(0);
  } finally {
    await blocker.stop(true);
  }
}, 30_000);

test("the folder a first start creates for its database is its owner's alone", async () => {
  // The database holds channel keys: a folder others can enter exposed it, and its WAL, to every user of the machine.
  const dataDir = join(newDir(), "var", "gateway");
  const gateway = await spawnGateway(dataDir);
  try {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, "..")).mode & 0o777).toBe(0o700);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
});
