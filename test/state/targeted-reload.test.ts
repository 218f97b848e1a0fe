import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { QueryLog } from "../helpers/query-log.ts";
import { waitFor } from "../billing/_support.ts";
import { ChannelRegistry } from "../../src/channels/channel-registry.ts";
import type { Change } from "../../src/state/change-feed.ts";

/**
 * An admin change reloads what it names (src/state/change-feed.ts, apply-changes.ts), on the
 * instance that made it and on another polling the same database: one channel's row, not the
 * whole table (20 ms with 5,000 channels), and only the keys of the token or user it touched,
 * not every cached key.
 */

const CHANNELS = 30;
const logA = new QueryLog();
const logB = new QueryLog();
let a: TestGateway;
let b: TestGateway;
let channelIds: string[];

beforeAll(async () => {
  a = await startTestGateway({ plugins: [logA] });
  channelIds = [];
  for (let i = 0; i < CHANNELS; i++) {
    const created = await a.admin("POST", "/v1/admin/channels", { name: `c${i}`, type: "mock", models: [`tr-${i % 5}`], priority: i % 3 });
    channelIds.push(created.body.id);
  }
  b = await startTestGateway({ dir: a.dir, plugins: [logB] });
  b.services.changes.start(20);
  // Brings `a` past the changes b's start made (a full reload), as each test expects.
  await settingsReachB("Started");
});
afterAll(async () => {
  b.services.changes.stop();
  await b.close({ keepFiles: true });
  await a.close();
});

/** Renames the system on `a`, and waits until `b` has caught up with it (and every change before). */
async function settingsReachB(name: string): Promise<void> {
  expect((await a.admin("PATCH", "/v1/admin/settings", { system_name: name })).status).toBe(200);
  await waitFor("the settings on the other instance", async () => (await b.admin("GET", "/v1/admin/settings")).body.system_name === name, 2_000);
}

const priorityOn = async (gw: TestGateway, id: string) => (await gw.admin("GET", "/v1/admin/channels")).body.channels.find((c: { id: string }) => c.id === id)?.priority;

test("a channel change reads that channel's row again, not every channel, on both instances", async () => {
  const id = channelIds[7]!;
  logA.clear();
  logB.clear();
  expect((await a.admin("PATCH", `/v1/admin/channels/${id}`, { priority: 9 })).status).toBe(200);
  await waitFor("the change on the other instance", async () => (await priorityOn(b, id)) === 9, 2_000);
  // The route's own read of the channel, and the reload's.
  expect(logA.rowsRead("channels")).toBe(2);
  expect(logB.rowsRead("channels")).toBe(1);
});

test("a change to channels, prices or settings keeps every key in the cache", async () => {
  const user = await adminCreateUser(a, { email: `${crypto.randomUUID()}@example.test`, balance: 1 });
  const { key } = await adminCreateToken(a, { user_id: user.id, name: "kept" });
  const models = (gw: TestGateway) => gw.fetch("/v1/models", { headers: bearer(key) }).then((r) => r.status);
  await settingsReachB("Token made");
  expect({ a: await models(a), b: await models(b) }).toEqual({ a: 200, b: 200 });
  expect((await a.admin("PATCH", `/v1/admin/channels/${channelIds[3]}`, { weight: 4 })).status).toBe(200);
  expect((await a.admin("POST", "/v1/admin/prices", { model: "tr-priced", input_per_million: 1, output_per_million: 2 })).status).toBe(200);
  await settingsReachB("Renamed");
  logA.clear();
  logB.clear();
  expect({ a: await models(a), b: await models(b) }).toEqual({ a: 200, b: 200 });
  expect({ a: logA.reading("tokens").length, b: logB.reading("tokens").length }).toEqual({ a: 0, b: 0 });
});

test("a token or user change forgets those keys alone, and both instances then refuse them", async () => {
  const make = async () => {
    const user = await adminCreateUser(a, { email: `${crypto.randomUUID()}@example.test`, balance: 1 });
    return { user, token: await adminCreateToken(a, { user_id: user.id, name: "k" }) };
  };
  const [kept, disabled, suspended] = [await make(), await make(), await make()];
  const status = (gw: TestGateway, key: string) => gw.fetch("/v1/models", { headers: bearer(key) }).then((r) => r.status);
  await settingsReachB("Keys made");
  for (const gw of [a, b]) for (const { token } of [kept, disabled, suspended]) expect(await status(gw, token.key)).toBe(200);
  expect((await a.admin("PATCH", `/v1/admin/tokens/${disabled.token.id}`, { status: "disabled" })).status).toBe(200);
  expect((await a.admin("PATCH", `/v1/admin/users/${suspended.user.id}`, { status: "suspended" })).status).toBe(200);
  await waitFor("the suspension on the other instance", async () => (await status(b, suspended.token.key)) === 401, 2_000);
  expect({ disabled: await status(a, disabled.token.key), suspended: await status(a, suspended.token.key) }).toEqual({ disabled: 401, suspended: 401 });
  expect(await status(b, disabled.token.key)).toBe(401);
  logA.clear();
  logB.clear();
  expect({ a: await status(a, kept.token.key), b: await status(b, kept.token.key) }).toEqual({ a: 200, b: 200 });
  expect({ a: logA.reading("tokens").length, b: logB.reading("tokens").length }).toEqual({ a: 0, b: 0 });
});

/** What a registry loaded from scratch serves: every channel, and each model's candidates in order. */
async function served(registry: ChannelRegistry, models: string[]) {
  return { all: registry.all.map((c) => `${c.id}:${c.priority}:${c.status}`), byModel: models.map((m) => registry.candidatesFor(m).map((c) => c.id)) };
}

test("after channels are created, edited (models, priority, status) and deleted, the other instance serves what a full load does", async () => {
  let seed = 7;
  const next = (n: number) => (seed = (seed * 48_271) % 2_147_483_647) % n;
  const models = ["tr-0", "tr-1", "tr-2", "tr-3", "tr-4", "tr-new"];
  for (let step = 0; step < 40; step++) {
    const id = channelIds[next(channelIds.length)]!;
    const action = next(5);
    if (action === 0) {
      const created = await a.admin("POST", "/v1/admin/channels", { name: `n${step}`, type: "mock", models: [models[next(6)]!], priority: next(3) });
      channelIds.push(created.body.id);
    } else if (action === 1 && channelIds.length > 5) {
      expect((await a.admin("DELETE", `/v1/admin/channels/${id}`)).status).toBe(200);
      channelIds.splice(channelIds.indexOf(id), 1);
    } else if (action === 2) {
      expect((await a.admin("PATCH", `/v1/admin/channels/${id}`, { models: [models[next(6)]!, models[next(6)]!] })).status).toBe(200);
    } else if (action === 3) {
      expect((await a.admin("PATCH", `/v1/admin/channels/${id}`, { status: next(2) === 0 ? "disabled" : "active" })).status).toBe(200);
    } else {
      expect((await a.admin("PATCH", `/v1/admin/channels/${id}`, { priority: next(3), model_map: { [`tr-alias-${next(2)}`]: "x" } })).status).toBe(200);
    }
  }
  models.push("tr-alias-0", "tr-alias-1");
  const fresh = new ChannelRegistry(a.database.db);
  await fresh.load();
  const expected = await served(fresh, models);
  expect(await served(a.services.channels, models)).toEqual(expected);
  await waitFor("the other instance caught up", async () => Bun.deepEquals(await served(b.services.channels, models), expected), 2_000).catch(() => {});
  expect(await served(b.services.channels, models)).toEqual(expected);
});

test("an instance that finds change rows missing (pruned, or a counter moved without one) reloads everything", async () => {
  b.services.changes.stop();
  const id = channelIds[1]!;
  expect((await a.admin("PATCH", `/v1/admin/channels/${id}`, { priority: 42 })).status).toBe(200);
  await a.database.db.deleteFrom("admin_changes").execute();
  logB.clear();
  b.services.changes.start(20);
  await waitFor("the change on the other instance", async () => (await priorityOn(b, id)) === 42, 2_000);
  const stored = await a.database.db.selectFrom("channels").select("id").execute();
  expect(logB.rowsRead("channels")).toBe(stored.length);
});

test("a change of a kind this version does not know (written by a newer instance mid-upgrade) reloads everything", async () => {
  const id = channelIds[2]!;
  const unknownKind = { kind: "model-alias", subject: "some-alias" } as unknown as Change;
  logB.clear();
  await a.services.changes.commit(unknownKind, (trx) => trx.updateTable("channels").set({ priority: 77, updated_at: Date.now() }).where("id", "=", id).execute());
  await waitFor("the change on the other instance", async () => (await priorityOn(b, id)) === 77, 2_000);
  expect(await priorityOn(a, id)).toBe(77);
  const stored = await a.database.db.selectFrom("channels").select("id").execute();
  expect(logB.rowsRead("channels")).toBe(stored.length);
});
