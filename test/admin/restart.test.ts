import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { call, getModels } from "./_helpers.ts";

const CHANNEL_SECRET = "sk-upstream-restart-9d8c7b6a5f4e3d2c1b0a";

let dir: string;
let second: TestGateway | undefined;
const before: Record<string, any> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-admin-restart-"));
  const first = await startTestGateway({ dir });
  try {
    before.demoKey = first.demoKey;
    const user = await first.admin("POST", "/v1/admin/users", { email: "persist@example.test", balance: 3 });
    expect(user.status).toBe(201);
    before.user = user.body;
    const token = await first.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "persisted", permissions: ["chat"] });
    expect(token.status).toBe(201);
    before.token = token.body;
    const mk = await first.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "persisted-mk", role: "management" });
    expect(mk.status).toBe(201);
    before.mk = mk.body;
    const revoked = await first.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "persisted-revoked" });
    expect((await first.admin("DELETE", `/v1/admin/tokens/${revoked.body.id}`)).status).toBe(200);
    before.revoked = revoked.body;
    const channel = await first.admin("POST", "/v1/admin/channels", {
      name: "persisted channel",
      type: "openai",
      base_url: "http://127.0.0.1:9/v1",
      api_key: CHANNEL_SECRET,
      models: ["persist-model"],
      priority: 3,
    });
    expect(channel.status).toBe(201);
    before.channel = channel.body;
    expect((await first.admin("POST", "/v1/admin/topup", { user_id: user.body.id, amount: 1.5 })).status).toBe(200);
    expect((await first.admin("PATCH", "/v1/admin/settings", { rate_limits: { requests_per_minute: 77 } })).status).toBe(200);
    expect((await first.admin("POST", "/v1/admin/prices", { model: "persist-model", input_per_million: 1.25, output_per_million: 5 })).status).toBeLessThan(300);
    // Used just before shutdown: last_used is pending in memory and must be flushed.
    expect(await getModels(first, token.body.key)).toBe(200);
    before.lastUsed = (await first.admin("GET", "/v1/admin/tokens")).body.tokens.find((t: any) => t.id === token.body.id).last_used;
  } finally {
    await first.close({ keepFiles: true });
  }
  second = await startTestGateway({ dir });
  // Read before any test uses a key on the second instance (a use moves last_used on).
  before.tokensAfterRestart = (await second.admin("GET", "/v1/admin/tokens")).body.tokens;
});

afterAll(async () => {
  await second?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the second start is not a first start (no new demo key printed)", () => {
  expect(before.demoKey).toMatch(/^sk-gw-/);
  expect(second!.demoKey).toBe("");
});

test("the user and their balance survive a restart", async () => {
  const user = await second!.admin("GET", `/v1/admin/users/${before.user.id}`);
  expect(user.status).toBe(200);
  expect(user.body).toMatchObject({ id: before.user.id, email: "persist@example.test", status: "active", balance: 4.5, created_at: before.user.created_at });
});

test("tokens survive, with their status and permissions, and the keys still work", async () => {
  const tokens = (await second!.admin("GET", "/v1/admin/tokens")).body.tokens;
  const token = tokens.find((t: any) => t.id === before.token.id);
  expect(token).toMatchObject({ name: "persisted", user_id: before.user.id, status: "active", permissions: ["chat"], created_at: before.token.created_at });
  expect(tokens.find((t: any) => t.id === before.revoked.id)?.status).toBe("revoked");

  expect(await getModels(second!, before.token.key)).toBe(200);
  const balance = await call(second!, "GET", "/v1/balance", { headers: bearer(before.token.key) });
  expect(balance.status).toBe(200);
  expect(balance.body.balance).toBe(4.5);
  expect(await getModels(second!, before.revoked.key)).toBe(401);
  expect(await getModels(second!, before.demoKey)).toBe(200);
});

test("a management key created before the restart still works on the admin API", async () => {
  const response = await call(second!, "GET", "/v1/admin/settings", { headers: bearer(before.mk.key) });
  expect(response.status).toBe(200);
});

test("last_used written before shutdown survives the restart", async () => {
  expect(before.lastUsed).not.toBeNull();
  const token = before.tokensAfterRestart.find((t: any) => t.id === before.token.id);
  expect(token.last_used).toBe(before.lastUsed);
});

test("the channel survives, with its secret still masked", async () => {
  const response = await second!.fetch("/v1/admin/channels", { headers: bearer(second!.managementKey) });
  const text = await response.text();
  expect(response.status).toBe(200);
  expect(text).not.toContain(CHANNEL_SECRET);
  const channel = JSON.parse(text).channels.find((c: any) => c.id === before.channel.id);
  expect(channel).toMatchObject({ name: "persisted channel", status: "active", models: ["persist-model"], priority: 3 });
});

test("settings and prices survive", async () => {
  expect((await second!.admin("GET", "/v1/admin/settings")).body.rate_limits.requests_per_minute).toBe(77);
  const price = (await second!.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "persist-model");
  expect(price).toMatchObject({ input_per_million: 1.25, output_per_million: 5 });
});
