import { expect, test } from "bun:test";
import { processPairEachTest, waitFor, waitUntilServing } from "../billing/_support.ts";
import { chat, exchanged, expectFreePlanRefused, MODEL, newKey, rateRow, readFile, serveModel, type Key } from "./_processes.ts";

/**
 * Two real gateway processes share one database file and exchange what their rate limits
 * admitted on the change feed's poll (GATEWAY_CACHE_POLL_MS = 100 here): a limit used up on
 * one is refused on the other after one exchange, for requests and for tokens, and what a
 * process killed with SIGKILL admitted still counts on the other for the rest of its minute.
 * Exchanges are waited for through a probe key (see _processes.ts).
 */

/** A request the mock answers with exactly its reservation: 16 prompt tokens, 5 output tokens. */
const EXACT_TOKENS = 21;

const pair = processPairEachTest("limits-two-processes-");

/** The mock model with a price, and a probe key served by both processes. */
async function setUp(): Promise<Key> {
  const { a, b } = pair;
  await serveModel(a);
  const probe = await newKey(a, "enterprise");
  for (const gw of [a, b]) await waitUntilServing(gw, MODEL, probe.key);
  return probe;
}

test("a free-plan key's 10 requests on one process leave the 11th, on the other, refused with 429 after one exchange", async () => {
  const { a, b } = pair;
  const probe = await setUp();
  const free = await newKey(a, "free");
  await waitUntilServing(b, MODEL, free.key);
  await exchanged(pair.dir, a, probe);
  await exchanged(pair.dir, b, probe);

  for (let i = 0; i < 10; i++) {
    const ok = await chat(a, free.key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - i));
  }
  await waitFor("a's 10 requests in the database", () => rateRow(pair.dir, a, free.bucket)?.requests === 10);
  await exchanged(pair.dir, b, probe);

  await expectFreePlanRefused(await chat(b, free.key));
}, 30_000);

test("tokens per minute used up on one process are refused on the other after one exchange", async () => {
  const { a, b } = pair;
  const probe = await setUp();
  // Four requests of 21 tokens use all 84: one more waits until the first ages out.
  const limitedKey = await newKey(a, "enterprise", { requests_per_minute: 1000, tokens_per_minute: 4 * EXACT_TOKENS });
  await waitUntilServing(b, MODEL, limitedKey.key);
  await exchanged(pair.dir, a, probe);
  await exchanged(pair.dir, b, probe);

  for (let i = 0; i < 4; i++) expect((await chat(a, limitedKey.key)).status).toBe(200);
  await waitFor("a's 84 tokens in the database", () => rateRow(pair.dir, a, limitedKey.bucket)?.tokens === 4 * EXACT_TOKENS);
  await exchanged(pair.dir, b, probe);

  const limited = await chat(b, limitedKey.key);
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toEqual({ message: expect.stringContaining("tokens per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-tokens")).toBe(String(4 * EXACT_TOKENS));
  expect(Number(limited.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(EXACT_TOKENS);
}, 30_000);

test("what a process killed with SIGKILL admitted still counts on the other, though the other found it dead", async () => {
  const { a, b } = pair;
  const probe = await setUp();
  const free = await newKey(a, "free");
  await waitUntilServing(b, MODEL, free.key);
  for (let i = 0; i < 10; i++) expect((await chat(b, free.key)).status).toBe(200);
  await waitFor("b's 10 requests in the database", () => rateRow(pair.dir, b, free.bucket)?.requests === 10);
  const instanceOfB = readFile(pair.dir, (db) => (db.query("select id from instances where pid = ?").get(b.pid) as { id: string }).id);
  await b.kill9();
  // Found at the survivor's next heartbeat (every 5 s): same host, the pid is not running.
  await waitFor("b found dead", () => readFile(pair.dir, (db) => db.query("select id from instances where id = ?").get(instanceOfB)) === null, 10_000, 100);
  await exchanged(pair.dir, a, probe);
  await expectFreePlanRefused(await chat(a, free.key));
}, 30_000);
