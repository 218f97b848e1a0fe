import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser, bearer } from "../helpers/common.ts";
import { fakeProcesses, whenFeedSees } from "../billing/_inprocess.ts";

/**
 * Rate limits shared by in-process gateways on one database file (src/limits/rate-exchange.ts),
 * each exchange run by hand so every step is seen: one alone writes what it admitted and reads
 * nothing, and publishes its drained buckets again once another joins; two charge each other what they admitted; the rows of one
 * that died go, and one that retires leaves its levels until the other's clean-up. The same with
 * real processes, on the change feed's timer, is in two-processes.test.ts and restart.test.ts.
 */

const processes = fakeProcesses("rate-exchange-host");

let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  a = await startTestGateway({ identity: processes.identity(4_100_001) });
});
afterAll(async () => {
  await a.close({ keepFiles: true });
  // `b` may have been closed already, by the test of a dead instance.
  await b?.close({ keepFiles: true }).catch(() => {});
  rmSync(a.dir, { recursive: true, force: true });
});

async function keyOnPlan(plan: string, overrides: Record<string, number> = {}): Promise<{ userId: string; tokenId: string; key: string }> {
  const user = await adminCreateUser(a, { email: `${crypto.randomUUID()}@example.com`, balance: 5, plan });
  const token = await adminCreateToken(a, { user_id: user.id, name: "k", ...overrides });
  return { userId: user.id, tokenId: token.id, key: token.key };
}

const chat = (gw: TestGateway, key: string, extra: object = {}) =>
  gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ model: "demo-chat", max_tokens: 20, messages: [{ role: "user", content: "hi" }], ...extra }),
  });

const rowsOf = (gw: TestGateway) => a.database.db.selectFrom("rate_usage").selectAll().where("instance_id", "=", gw.services.instance.id).execute();

/** The free-plan key `a` drains while alone. */
let drained: { userId: string; key: string };

test("an instance alone on its database writes what it admitted with its levels, for the next to start; idle, it writes nothing", async () => {
  drained = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(a, drained.key)).status).toBe(200);
  expect(a.services.instance.alone).toBe(true);
  await a.services.rateExchange.run();
  const written = await a.database.db.selectFrom("rate_usage").selectAll().execute();
  expect(written).toEqual([expect.objectContaining({ bucket: `user:${drained.userId}`, requests: 10, requests_per_minute: 10 })]);
  expect(written[0]!.requests_level).toBeLessThan(1);
  await a.services.rateExchange.run();
  expect(await a.database.db.selectFrom("rate_usage").selectAll().execute()).toEqual(written);
});

test("an instance joining one that was alone refuses an account the other drained, once both exchanged", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_002) });
  expect(b.services.instance.alone).toBe(false);
  await whenFeedSees(a, false);
  // `a`'s first exchange with company publishes the levels of its buckets not full, with
  // nothing more counted; `b` has never read the row, so it lowers to the level and charges nothing.
  await a.services.rateExchange.run();
  expect(await rowsOf(a)).toEqual([expect.objectContaining({ bucket: `user:${drained.userId}`, requests: 10, requests_level: expect.any(Number) })]);
  expect((await rowsOf(a))[0]!.requests_level).toBeLessThan(1);
  await b.services.rateExchange.run();
  const limited = await chat(b, drained.key);
  expect(limited.status).toBe(429);
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
});

test("a free-plan key's 10 requests on one instance leave the 11th on the other refused, once both exchanged", async () => {
  const { userId, key } = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(a, key)).status).toBe(200);
  await a.services.rateExchange.run();
  expect((await rowsOf(a)).filter((row) => row.bucket === `user:${userId}`)).toEqual([
    expect.objectContaining({ requests: 10, requests_per_minute: 10, tokens_per_minute: 100_000 }),
  ]);
  await b.services.rateExchange.run();

  const limited = await chat(b, key);
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toEqual({ message: expect.stringContaining("requests per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
});

test("tokens are exchanged net of settlement: a reservation settled to actual usage counts the actual", async () => {
  const { tokenId, key } = await keyOnPlan("free", { requests_per_minute: 1000, tokens_per_minute: 300 });
  for (let i = 0; i < 3; i++) expect((await chat(a, key, { max_tokens: 80 })).status).toBe(200);
  await a.services.usage.flush();
  const used = await a.database.db.selectFrom("usage_logs").select(["prompt_tokens", "completion_tokens"]).where("token_id", "=", tokenId).execute();
  const actual = used.reduce((sum, row) => sum + row.prompt_tokens + row.completion_tokens, 0);
  expect(actual).toBeLessThan(3 * 80);
  await a.services.rateExchange.run();
  const [row] = (await rowsOf(a)).filter((r) => r.bucket === `key:${tokenId}`);
  expect(row).toMatchObject({ requests: 3, tokens: actual, tokens_per_minute: 300 });

  // On `b`, what is left is 300 less the actual: a reservation of that much output and a prompt waits.
  await b.services.rateExchange.run();
  const left = 300 - actual;
  const limited = await chat(b, key, { max_tokens: left });
  expect(limited.status).toBe(429);
  expect((await limited.json()).error.message).toContain("tokens per minute");
  expect(Number(limited.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(left);
});

test("the rows of an instance found dead go with it, and the one left alone writes its own and reads none", async () => {
  const { userId, key } = await keyOnPlan("pro");
  expect((await chat(b, key)).status).toBe(200);
  await b.services.rateExchange.run();
  expect((await rowsOf(b)).length).toBeGreaterThan(0);

  // `b` dies: its process is gone and it never retires.
  await b.close({ keepFiles: true });
  processes.end(b.services.identity.pid);
  await a.services.instance.heartbeat();
  expect(await rowsOf(b)).toEqual([]);
  expect(a.services.instance.alone).toBe(true);

  // A drained bucket in a row of some other writer: an instance alone does not read it.
  const other = await keyOnPlan("pro");
  const foreign = { instance_id: "inst_elsewhere", bucket: `user:${other.userId}`, requests: 5, tokens: 0, requests_per_minute: 600, tokens_per_minute: 2_000_000 };
  await a.database.db.insertInto("rate_usage").values({ ...foreign, requests_level: 0, tokens_level: null, updated_at: Date.now() }).execute();
  expect((await chat(a, key)).status).toBe(200);
  await a.services.rateExchange.run();
  expect((await rowsOf(a)).filter((row) => row.bucket === `user:${userId}`)).toEqual([expect.objectContaining({ requests: 1 })]);
  const unlowered = await chat(a, other.key);
  expect(unlowered.status).toBe(200);
  expect(unlowered.headers.get("x-ratelimit-remaining-requests")).toBe("599");
  await a.database.db.deleteFrom("rate_usage").where("instance_id", "=", foreign.instance_id).execute();
});

test("an instance that retires writes what it admitted since its last exchange and its levels; the other's clean-up takes them", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_003) });
  await whenFeedSees(a, false);
  const { userId, key } = await keyOnPlan("pro");
  await b.services.rateExchange.run();
  expect((await chat(b, key)).status).toBe(200);
  await b.services.rateExchange.run();
  // `b` began from the levels of the last minute, so its first exchange published those not full.
  const rowOf = async () => (await rowsOf(b)).find((row) => row.bucket === `user:${userId}`);
  expect(await rowOf()).toMatchObject({ requests: 1 });
  expect((await chat(b, key)).status).toBe(200);

  await b.services.rateExchange.retire();
  await b.services.instance.retire();
  const left = await rowOf();
  expect(left).toMatchObject({ requests: 2 });
  expect(left!.requests_level).toBeLessThan(left!.requests_per_minute - 1);
  await whenFeedSees(a, true);
  await a.services.instance.heartbeat();
  expect(await rowsOf(b)).toEqual([]);
});

test("an instance restarting beside another begins from the other's levels, even when its predecessor's rows were cleaned up before it started", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_004) });
  await whenFeedSees(a, false);
  const { userId, key } = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(b, key)).status).toBe(200);
  await b.services.rateExchange.run();
  await a.services.rateExchange.run();
  // `a` knows the bucket is drained, but has no row of it: it served none of it.
  expect((await rowsOf(a)).some((row) => row.bucket === `user:${userId}`)).toBe(false);

  // `b` restarts: it stops gracefully, and `a` cleans its rows up before the new one has begun from them.
  await b.services.rateExchange.retire();
  await b.services.instance.retire();
  await b.close({ keepFiles: true });
  await a.services.instance.heartbeat();
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_005) });
  await whenFeedSees(a, false);
  await a.services.rateExchange.run();
  await b.services.rateExchange.run();
  expect((await chat(b, key)).status).toBe(429);
});
