import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SLOT_MS } from "../../src/limits/minute-window.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser, bearer } from "../helpers/common.ts";
import { fakeProcesses, whenFeedSees } from "../billing/_inprocess.ts";
import { totalsOf } from "./_support.ts";

/**
 * Rate limits shared by in-process gateways on one database file (src/limits/rate-exchange.ts),
 * each exchange run by hand so every step is seen: one alone writes its windows and, after
 * one last read of what the others left, reads nothing; one that starts counts the windows of the last minute at once; two count each
 * other's; the rows of one that died or retired stay for their minute, and go once a minute old.
 * The same with real processes, on the change feed's timer, is in two-processes.test.ts and
 * fresh-instance.test.ts.
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

const rowsOf = (gw: TestGateway) => a.database.db.selectFrom("rate_windows").selectAll().where("instance_id", "=", gw.services.instance.id).execute();

const rowOfBucket = async (gw: TestGateway, bucket: string) => (await rowsOf(gw)).find((row) => row.bucket === bucket);

/** The free-plan key `a` drains while alone. */
let drained: { userId: string; key: string };

test("an instance alone on its database writes its windows, for the next to start; idle, it writes nothing", async () => {
  drained = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(a, drained.key)).status).toBe(200);
  expect(a.services.instance.alone).toBe(true);
  await a.services.rateExchange.run();
  const written = await a.database.db.selectFrom("rate_windows").selectAll().execute();
  expect(written).toEqual([expect.objectContaining({ bucket: `user:${drained.userId}` })]);
  expect(totalsOf(written[0]!).requests).toBe(10);
  await a.services.rateExchange.run();
  expect(await a.database.db.selectFrom("rate_windows").selectAll().execute()).toEqual(written);
});

test("an instance that starts beside one that was alone refuses an account the other drained, before any exchange", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_002) });
  expect(b.services.instance.alone).toBe(false);
  await whenFeedSees(a, false);
  const limited = await chat(b, drained.key);
  expect(limited.status).toBe(429);
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
});

test("a free-plan key's 10 requests on one instance leave the 11th on the other refused, once both exchanged", async () => {
  const { userId, key } = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(a, key)).status).toBe(200);
  await a.services.rateExchange.run();
  expect(totalsOf((await rowOfBucket(a, `user:${userId}`))!)).toEqual({ requests: 10, tokens: expect.any(Number) });
  await b.services.rateExchange.run();

  const limited = await chat(b, key);
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toEqual({ message: expect.stringContaining("requests per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
});

test("requests split between two instances add up: 5 on each leave the 11th refused on either", async () => {
  const { key } = await keyOnPlan("free");
  for (let i = 0; i < 5; i++) expect((await chat(a, key)).status).toBe(200);
  for (let i = 0; i < 5; i++) expect((await chat(b, key)).status).toBe(200);
  await a.services.rateExchange.run();
  await b.services.rateExchange.run();
  await a.services.rateExchange.run();
  expect((await chat(a, key)).status).toBe(429);
  expect((await chat(b, key)).status).toBe(429);
});

test("tokens are exchanged net of settlement: a reservation settled to actual usage counts the actual", async () => {
  const { tokenId, key } = await keyOnPlan("free", { requests_per_minute: 1000, tokens_per_minute: 300 });
  for (let i = 0; i < 3; i++) expect((await chat(a, key, { max_tokens: 80 })).status).toBe(200);
  await a.services.usage.flush();
  const used = await a.database.db.selectFrom("usage_logs").select(["prompt_tokens", "completion_tokens"]).where("token_id", "=", tokenId).execute();
  const actual = used.reduce((sum, row) => sum + row.prompt_tokens + row.completion_tokens, 0);
  expect(actual).toBeLessThan(3 * 80);
  await a.services.rateExchange.run();
  expect(totalsOf((await rowOfBucket(a, `key:${tokenId}`))!)).toEqual({ requests: 3, tokens: actual });

  // On `b`, what is left is 300 less the actual: a reservation of that much output and a prompt waits.
  await b.services.rateExchange.run();
  const left = 300 - actual;
  const limited = await chat(b, key, { max_tokens: left });
  expect(limited.status).toBe(429);
  expect((await limited.json()).error.message).toContain("tokens per minute");
  expect(Number(limited.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(left);
});

test("the rows of an instance found dead stay for their minute, and go once a minute old; one alone reads none", async () => {
  const { userId, key } = await keyOnPlan("pro");
  expect((await chat(b, key)).status).toBe(200);
  await b.services.rateExchange.run();
  expect((await rowsOf(b)).length).toBeGreaterThan(0);

  // `b` dies: its process is gone and it never retires.
  await b.close({ keepFiles: true });
  processes.end(b.services.identity.pid);
  await a.services.instance.heartbeat();
  expect(a.services.instance.alone).toBe(true);
  expect((await rowsOf(b)).length).toBeGreaterThan(0);

  // A drained bucket in a row of some other writer, after the first exchange alone (which reads once what the others left): an instance alone does not read it.
  await a.services.rateExchange.run();
  const other = await keyOnPlan("pro");
  const foreign = { instance_id: "inst_elsewhere", bucket: `user:${other.userId}`, windows: JSON.stringify({ base: Math.floor(Date.now() / SLOT_MS), requests: [0, 600], tokens: [] }) };
  await a.database.db.insertInto("rate_windows").values({ ...foreign, updated_at: Date.now() }).execute();
  await a.services.rateExchange.run();
  const unread = await chat(a, other.key);
  expect(unread.status).toBe(200);
  expect(unread.headers.get("x-ratelimit-remaining-requests")).toBe("599");

  // `b`'s rows, made a minute old, are deleted by `a`'s next write.
  await a.database.db.updateTable("rate_windows").set({ updated_at: Date.now() - 62_000 }).where("instance_id", "=", b.services.instance.id).execute();
  expect((await chat(a, key)).status).toBe(200);
  await a.services.rateExchange.run();
  expect(await rowsOf(b)).toEqual([]);
  expect(totalsOf((await rowOfBucket(a, `user:${userId}`))!).requests).toBe(1);
  await a.database.db.deleteFrom("rate_windows").where("instance_id", "=", foreign.instance_id).execute();
});

test("an instance that retires writes the windows that changed since its last exchange, and they stay after the other's clean-up", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_003) });
  await whenFeedSees(a, false);
  const { userId, key } = await keyOnPlan("pro");
  expect((await chat(b, key)).status).toBe(200);
  await b.services.rateExchange.run();
  expect(totalsOf((await rowOfBucket(b, `user:${userId}`))!).requests).toBe(1);
  expect((await chat(b, key)).status).toBe(200);

  await b.services.rateExchange.retire();
  await b.services.instance.retire();
  expect(totalsOf((await rowOfBucket(b, `user:${userId}`))!).requests).toBe(2);
  await whenFeedSees(a, true);
  await a.services.instance.heartbeat();
  expect(totalsOf((await rowOfBucket(b, `user:${userId}`))!).requests).toBe(2);
  await b.close({ keepFiles: true });
});

test("an instance restarting beside another begins from its predecessor's windows, after the other's clean-up found it gone", async () => {
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_004) });
  const key = await drainedOnB();

  // `b` restarts: it stops gracefully, and `a` cleans up after it before the new one starts.
  await stopGracefully(b);
  await a.services.instance.heartbeat();
  b = await startTestGateway({ dir: a.dir, identity: processes.identity(4_100_005) });
  await expectRefused(await chat(b, key));
});

test("an instance left alone counts the windows the one that retired wrote last, for the rest of their minute", async () => {
  const key = await drainedOnB();

  // `b` stops, writing its windows as it goes; `a`'s next poll finds itself alone, and exchanges.
  await stopGracefully(b);
  await whenFeedSees(a, true);
  await a.services.rateExchange.run();
  await expectRefused(await chat(a, key));
});

/** A free-plan key whose 10 requests `b` served, once `a` knows of `b`. */
async function drainedOnB(): Promise<string> {
  await whenFeedSees(a, false);
  const { key } = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) expect((await chat(b, key)).status).toBe(200);
  return key;
}

/** What a gateway does at a graceful stop, in its order: its last windows, its record, then the server. */
async function stopGracefully(gw: TestGateway): Promise<void> {
  await gw.services.rateExchange.retire();
  await gw.services.instance.retire();
  await gw.close({ keepFiles: true });
}

async function expectRefused(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
}
