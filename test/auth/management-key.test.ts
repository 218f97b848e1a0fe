/**
 * DESIGN 5 / README: GATEWAY_MANAGEMENT_KEY is a valid management key; starting on the
 * same database with a different value makes the new one valid and retires the old one.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, TEST_MANAGEMENT_KEY, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "./support.ts";

const SECOND_KEY = "mk-gw-second-management-key-abcdefghij";
const dirs: string[] = [];
const gateways: TestGateway[] = [];

afterAll(async () => {
  for (const gw of gateways) await gw.close().catch(() => {});
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const settingsWith = (gw: TestGateway, key: string) => gw.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${key}` } });

test("GATEWAY_MANAGEMENT_KEY is a valid management key", async () => {
  const gw = await startTestGateway();
  gateways.push(gw);
  const response = await settingsWith(gw, TEST_MANAGEMENT_KEY);
  expect(response.status).toBe(200);
  expect(typeof (await response.json()).system_name).toBe("string");
  // A key that differs in one character is not.
  await expectError(await settingsWith(gw, TEST_MANAGEMENT_KEY.slice(0, -1) + "X"), 401, "authentication_error");
});

test("a restart with a different GATEWAY_MANAGEMENT_KEY: the new key works, the old one is 401", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-mkey-"));
  dirs.push(dir);

  const first = await startTestGateway({ dir });
  expect((await settingsWith(first, TEST_MANAGEMENT_KEY)).status).toBe(200);
  await first.close({ keepFiles: true });

  const second = await startTestGateway({ dir, env: { GATEWAY_MANAGEMENT_KEY: SECOND_KEY } });
  gateways.push(second);
  const fresh = await settingsWith(second, SECOND_KEY);
  expect(fresh.status).toBe(200);
  await expectError(await settingsWith(second, TEST_MANAGEMENT_KEY), 401, "authentication_error");
  await expectError(
    await second.fetch("/v1/admin/tokens", { headers: { authorization: `Bearer ${TEST_MANAGEMENT_KEY}` } }),
    401,
    "authentication_error",
  );

  // The new key can run the admin API (write included).
  const created = await second.fetch("/v1/admin/users", {
    method: "POST",
    headers: { authorization: `Bearer ${SECOND_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "after-rotation@example.com" }),
  });
  expect(created.status).toBe(201);
});

test("going back to the first key on a third start makes it valid again and the second one 401", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-mkey-"));
  dirs.push(dir);
  const a = await startTestGateway({ dir });
  await a.close({ keepFiles: true });
  const b = await startTestGateway({ dir, env: { GATEWAY_MANAGEMENT_KEY: SECOND_KEY } });
  expect((await settingsWith(b, SECOND_KEY)).status).toBe(200);
  await b.close({ keepFiles: true });
  const c = await startTestGateway({ dir });
  gateways.push(c);
  expect((await settingsWith(c, TEST_MANAGEMENT_KEY)).status).toBe(200);
  await expectError(await settingsWith(c, SECOND_KEY), 401, "authentication_error");
});

test("a new GATEWAY_MANAGEMENT_KEY works after the operator renamed the admin account", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-mkey-"));
  dirs.push(dir);
  const first = await startTestGateway({ dir });
  const users = (await first.admin("GET", "/v1/admin/users")).body.users;
  const admin = users.find((u: { email: string }) => u.email === "admin@gateway.local");
  expect((await first.admin("PATCH", `/v1/admin/users/${admin.id}`, { email: "ops@example.com" })).status).toBe(200);
  await first.close({ keepFiles: true });

  const second = await startTestGateway({ dir, env: { GATEWAY_MANAGEMENT_KEY: SECOND_KEY } });
  gateways.push(second);
  expect((await settingsWith(second, SECOND_KEY)).status).toBe(200);
  await expectError(await settingsWith(second, TEST_MANAGEMENT_KEY), 401, "authentication_error");
  const owner = (await second.fetch("/v1/admin/tokens", { headers: { authorization: `Bearer ${SECOND_KEY}` } }).then((r) => r.json())).tokens
    .find((t: { name: string; status: string }) => t.name === "GATEWAY_MANAGEMENT_KEY" && t.status === "active").user_id;
  expect(owner).toBe(admin.id);
});

test("an instance already running on the same database stops accepting the retired key within the cache poll", async () => {
  // README: other instances sharing the database notice token changes within
  // GATEWAY_CACHE_POLL_MS. A key retired by another instance's start is such a change.
  const dir = mkdtempSync(join(tmpdir(), "gateway-mkey-"));
  dirs.push(dir);
  const running = await startTestGateway({ dir });
  gateways.push(running);
  running.services.changes.start(50);
  expect((await settingsWith(running, TEST_MANAGEMENT_KEY)).status).toBe(200); // cached in `running`

  const restarted = await startTestGateway({ dir, env: { GATEWAY_MANAGEMENT_KEY: SECOND_KEY } });
  gateways.push(restarted);
  await expectError(await settingsWith(restarted, TEST_MANAGEMENT_KEY), 401, "authentication_error");

  let status = 0;
  const deadline = Date.now() + 1_000;
  while (Date.now() < deadline) {
    status = (await settingsWith(running, TEST_MANAGEMENT_KEY)).status;
    if (status === 401) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(status).toBe(401);
  expect((await settingsWith(running, SECOND_KEY)).status).toBe(200);
});
