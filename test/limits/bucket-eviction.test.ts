import { afterAll, beforeAll, expect, test } from "bun:test";
import { SLOT_MS } from "../../src/limits/minute-window.ts";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { adminCreateToken, adminCreateUser, bearer } from "../helpers/common.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { FREE, principal, refusal } from "./_support.ts";

/**
 * The rate limiter lets go of a bucket that holds nothing any more (nothing used here or by
 * other instances in the last minute, nothing waiting for the exchange, no reservation
 * unsettled), on the exchange's cadence: the same as no bucket, so callers see no difference,
 * and the map of buckets shrinks back.
 */

/** A clock the tests move by hand. */
let clock = Date.parse("2026-11-21T10:00:00Z");

test("a bucket whose window has aged out with nothing pending is let go, and the next request finds it empty", () => {
  const rates = new RateLimiter(() => clock);
  for (let i = 0; i < 3; i++) rates.admit(principal("u1"), FREE, 10).settle(10);
  rates.takeChanged();
  rates.evictIdle();
  expect(rates.size).toBe(1);
  clock += 61_000;
  rates.evictIdle();
  expect(rates.size).toBe(0);
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("9");
});

test("a reservation not settled yet holds its bucket, and settles into it", () => {
  const rates = new RateLimiter(() => clock);
  const grant = rates.admit(principal("u2"), FREE, 400);
  rates.takeChanged();
  clock += 30_000;
  grant.settle(900);
  expect(rates.takeChanged()).toEqual([expect.objectContaining({ bucket: "user:u2", tokens: [expect.any(Number), 900] })]);
  const counted = rates.admit(principal("u2"), FREE, 0);
  expect(counted.headers["x-ratelimit-remaining-tokens"]).toBe("100");
  counted.settle(0);
  const late = rates.admit(principal("u2"), FREE, 50);
  rates.takeChanged();
  clock += 61_000;
  rates.evictIdle();
  expect(rates.size).toBe(1);
  late.settle(50);
  rates.takeChanged();
  rates.evictIdle();
  expect(rates.size).toBe(0);
});

test("windows still waiting for the exchange hold the bucket until taken", () => {
  const rates = new RateLimiter(() => clock);
  rates.admit(principal("u3"), FREE, 0).settle(0);
  rates.admit(principal("u4"), FREE, 0).settle(0);
  clock += 61_000;
  rates.evictIdle();
  expect(rates.size).toBe(2);
  rates.takeChanged();
  rates.evictIdle();
  expect(rates.size).toBe(0);
});

test("another instance's windows hold a bucket until they age out", () => {
  const rates = new RateLimiter(() => clock);
  rates.setPeerWindows("inst_b", { bucket: "user:u5", requests: [Math.floor(clock / SLOT_MS), 2], tokens: [] });
  rates.evictIdle();
  expect(rates.size).toBe(1);
  clock += 61_000;
  rates.evictIdle();
  expect(rates.size).toBe(0);
});

test("windows another machine wrote with its clock an hour ahead count for a minute from when they are read, and then let the bucket go", () => {
  const rates = new RateLimiter(() => clock);
  rates.setPeerWindows("inst_ahead", { bucket: "user:u6", requests: [Math.floor((clock + 3_600_000) / SLOT_MS), 10], tokens: [] });
  const limited = refusal(() => rates.admit(principal("u6"), FREE, 0));
  expect(limited.headers?.["retry-after"]).toBe("60");
  clock += 61_000;
  rates.evictIdle();
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

test("a gateway alone lets go of the buckets of accounts served, chats and token counts alike, once their windows aged out", async () => {
  const keys = [await freeKey(), await freeKey(), await freeKey()];
  for (const key of keys) expect((await send(key, "/v1/chat/completions", { model: "demo-chat", max_tokens: 20, messages: MESSAGES })).status).toBe(200);
  const counted = await send(await freeKey(), "/v1/messages/count_tokens", { model: "demo-chat", messages: MESSAGES });
  expect(counted.status).toBe(200);
  await gw.services.usage.flush();
  const held = gw.services.rateLimiter.size;
  expect(held).toBeGreaterThanOrEqual(4);

  await gw.services.rateExchange.run();
  expect(gw.services.rateLimiter.size).toBe(held);
  clock += 61_000;
  await gw.services.rateExchange.run();
  expect(gw.services.rateLimiter.size).toBe(0);
  const again = await send(keys[0]!, "/v1/chat/completions", { model: "demo-chat", max_tokens: 20, messages: MESSAGES });
  expect(again.headers.get("x-ratelimit-remaining-requests")).toBe("9");
});
