import { afterAll, beforeAll, expect, test } from "bun:test";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { adminCreateToken, adminCreateUser, bearer } from "../helpers/common.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { FREE, principal } from "./_support.ts";

/**
 * The rate limiter lets go of a bucket that is full again with nothing pending (no count
 * waiting for the exchange, no reservation unsettled), on the exchange's cadence: the same as
 * no bucket, so callers see no difference, and the map of buckets shrinks back.
 */

/** A clock the tests move by hand. */
let clock = Date.parse("2026-11-21T10:00:00Z");

test("a bucket full again with nothing pending is let go, and the next request finds a full one", () => {
  const rates = new RateLimiter(() => clock);
  for (let i = 0; i < 3; i++) rates.admit(principal("u1"), FREE, 10).settle(10);
  rates.takeAdmitted();
  rates.evictFull();
  expect(rates.size).toBe(1);
  clock += 60_000;
  rates.evictFull();
  expect(rates.size).toBe(0);
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("9");
});

test("a reservation not settled yet holds its bucket, full or not, and settles into it", () => {
  const rates = new RateLimiter(() => clock);
  const grant = rates.admit(principal("u2"), FREE, 400);
  rates.takeAdmitted();
  clock += 60_000;
  rates.evictFull();
  expect(rates.size).toBe(1);
  // Used far beyond its reservation: the debt lands in the bucket still held.
  grant.settle(1400);
  expect(rates.takeAdmitted()).toEqual([expect.objectContaining({ bucket: "user:u2", requests: 0, tokens: 1000, tokensLevel: 0 })]);
  rates.evictFull();
  expect(rates.size).toBe(1);
  expect(rates.admit(principal("u2"), FREE, 0).headers["x-ratelimit-remaining-tokens"]).toBe("0");
});

test("counts still waiting for the exchange hold the bucket until taken", () => {
  const rates = new RateLimiter(() => clock);
  rates.admit(principal("u3"), FREE, 0).settle(0);
  rates.admit(principal("u4"), FREE, 0).settle(0);
  clock += 60_000;
  rates.evictFull();
  expect(rates.size).toBe(2);
  rates.takeAdmitted();
  rates.evictFull();
  expect(rates.size).toBe(0);
});

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ now: () => clock });
});
afterAll(() => gw.close());

async function freeKey(): Promise<string> {
  const user = await adminCreateUser(gw, { email: `${crypto.randomUUID()}@example.com`, balance: 5, plan: "free" });
  return (await adminCreateToken(gw, { user_id: user.id, name: "k" })).key;
}

const send = (key: string, path: string, body: object) => gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
const MESSAGES = [{ role: "user", content: "hi" }];

test("a gateway alone lets go of the buckets of accounts served, chats and token counts alike, once they are full again", async () => {
  const keys = [await freeKey(), await freeKey(), await freeKey()];
  for (const key of keys) expect((await send(key, "/v1/chat/completions", { model: "demo-chat", max_tokens: 20, messages: MESSAGES })).status).toBe(200);
  const counted = await send(await freeKey(), "/v1/messages/count_tokens", { model: "demo-chat", messages: MESSAGES });
  expect(counted.status).toBe(200);
  await gw.services.usage.flush();
  const held = gw.services.rateLimiter.size;
  expect(held).toBeGreaterThanOrEqual(4);

  await gw.services.rateExchange.run();
  expect(gw.services.rateLimiter.size).toBe(held);
  clock += 60_000;
  await gw.services.rateExchange.run();
  expect(gw.services.rateLimiter.size).toBe(0);
  const again = await send(keys[0]!, "/v1/chat/completions", { model: "demo-chat", max_tokens: 20, messages: MESSAGES });
  expect(again.headers.get("x-ratelimit-remaining-requests")).toBe("9");
});
