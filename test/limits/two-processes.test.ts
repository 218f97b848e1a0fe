import { expect, test } from "bun:test";
import {
  bearer,
  exactCostBody,
  openReadOnly,
  PRICE_BODY,
  processPairEachTest,
  waitFor,
  waitUntilServing,
  type GatewayProcess,
} from "../billing/_support.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";

/**
 * Two real gateway processes share one database file and exchange what their rate-limit
 * buckets admitted on the change feed's poll (GATEWAY_CACHE_POLL_MS = 100 here): a limit
 * used up on one is refused on the other after one exchange, for requests and for tokens, and
 * the counts of a process killed with SIGKILL go when the other finds it dead.
 *
 * An exchange is waited for, never slept for: each process also serves a probe key, and once
 * the row of its probe requests has grown in the database, the process has finished an exchange
 * that began after the wait did (exchanges are write transactions, one at a time), and in it
 * read every row committed before.
 */

const MODEL = "m1";
/** A request the mock answers with exactly its reservation: 16 prompt tokens, 5 output tokens. */
const EXACT_TOKENS = 21;

const pair = processPairEachTest("limits-two-processes-");

interface Key {
  key: string;
  /** The rate-limit bucket the key counts in. */
  bucket: string;
}

/** A key on a new account of `plan`, made through process A; with its own limits, it counts in a bucket of its own. */
async function newKey(plan: string, ownLimits?: Record<string, number>): Promise<Key> {
  const user = await adminCreateUser(pair.a, { email: `${crypto.randomUUID()}@example.test`, plan, balance: 10 });
  const token = await adminCreateToken(pair.a, { user_id: user.id, name: "k", ...ownLimits });
  return { key: token.key, bucket: ownLimits ? `key:${token.id}` : `user:${user.id}` };
}

/** The mock model with a price, and a probe key served by both processes. */
async function setUp(): Promise<Key> {
  const { a, b } = pair;
  expect((await a.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: [MODEL] })).status).toBe(201);
  expect((await a.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
  const probe = await newKey("enterprise");
  for (const gw of [a, b]) await waitUntilServing(gw, MODEL, probe.key);
  return probe;
}

const chat = (gw: GatewayProcess, key: string) =>
  gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body: JSON.stringify(exactCostBody(MODEL)) });

/** What `read` finds in the database file, opened read-only for it. */
function readFile<T>(read: (db: ReturnType<typeof openReadOnly>) => T): T {
  const db = openReadOnly(pair.dir);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** `gw`'s row of rate_usage for `bucket`. */
function rateRow(gw: GatewayProcess, bucket: string): { requests: number; tokens: number } | undefined {
  const row = readFile((db) =>
    db.query("select r.requests, r.tokens from rate_usage r join instances i on i.id = r.instance_id where i.pid = ? and r.bucket = ?").get(gw.pid, bucket),
  );
  return (row as { requests: number; tokens: number } | null) ?? undefined;
}

/** Resolves once `gw` has finished an exchange that began after this call (see the file's comment). */
async function exchanged(gw: GatewayProcess, probe: Key): Promise<void> {
  const before = rateRow(gw, probe.bucket)?.requests ?? 0;
  // A probe admitted while `gw` did not know of the other process yet is dropped, so probe on.
  await waitFor("an exchange", async () => {
    await (await chat(gw, probe.key)).text();
    return (rateRow(gw, probe.bucket)?.requests ?? 0) > before;
  });
}

test("a free-plan key's 10 requests on one process leave the 11th, on the other, refused with 429 after one exchange", async () => {
  const { a, b } = pair;
  const probe = await setUp();
  const free = await newKey("free");
  await waitUntilServing(b, MODEL, free.key);
  await exchanged(a, probe);
  await exchanged(b, probe);

  for (let i = 0; i < 10; i++) {
    const ok = await chat(a, free.key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - i));
  }
  await waitFor("a's 10 requests in the database", () => rateRow(a, free.bucket)?.requests === 10);
  await exchanged(b, probe);

  const limited = await chat(b, free.key);
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toEqual({ message: expect.stringContaining("requests per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  expect(limited.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(\.\d+)?s$|^\d+m[\d.]+s$/);
}, 30_000);

test("tokens per minute used up on one process are refused on the other after one exchange", async () => {
  const { a, b } = pair;
  const probe = await setUp();
  // Four requests of 21 tokens use all 84; refilled at 84 a minute, one more is 15 s away.
  const limitedKey = await newKey("enterprise", { requests_per_minute: 1000, tokens_per_minute: 4 * EXACT_TOKENS });
  await waitUntilServing(b, MODEL, limitedKey.key);
  await exchanged(a, probe);
  await exchanged(b, probe);

  for (let i = 0; i < 4; i++) expect((await chat(a, limitedKey.key)).status).toBe(200);
  await waitFor("a's 84 tokens in the database", () => rateRow(a, limitedKey.bucket)?.tokens === 4 * EXACT_TOKENS);
  await exchanged(b, probe);

  const limited = await chat(b, limitedKey.key);
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toEqual({ message: expect.stringContaining("tokens per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-tokens")).toBe(String(4 * EXACT_TOKENS));
  expect(Number(limited.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(EXACT_TOKENS);
}, 30_000);

test("the counts of a process killed with SIGKILL are removed when the other finds it dead", async () => {
  const { b } = pair;
  const probe = await setUp();
  await exchanged(b, probe);
  const instanceOfB = readFile((db) => (db.query("select id from instances where pid = ?").get(b.pid) as { id: string }).id);
  const rowsOfB = () => readFile((db) => (db.query("select count(*) as n from rate_usage where instance_id = ?").get(instanceOfB) as { n: number }).n);
  expect(rowsOfB()).toBe(1);
  await b.kill9();
  // Found at the survivor's next heartbeat (every 5 s): same host, the pid is not running.
  await waitFor("b's counts gone", () => rowsOfB() === 0, 10_000, 100);
  expect(readFile((db) => db.query("select id from instances where id = ?").get(instanceOfB))).toBeNull();
}, 30_000);
