import { expect, test } from "bun:test";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { FREE, principal, refusal } from "./_support.ts";

/**
 * What the rate limiter gives and takes for the exchange between instances: the counts of what
 * each bucket admitted (tokens net of settlement), and the charge of what others admitted.
 */

const clock = Date.parse("2026-11-21T10:00:00Z");
const limiter = () => new RateLimiter(() => clock);

test("admissions are counted per bucket, tokens net of settlement, and a take starts the counts again and gives the levels", () => {
  const rates = limiter();
  const first = rates.admit(principal("u1"), FREE, 100);
  rates.admit(principal("u1"), FREE, 50);
  rates.admit(principal("u2", { requestsPerMinute: 5 }), { ...FREE, requestsPerMinute: 5 }, 0);
  first.settle(30);
  expect(rates.takeAdmitted()).toEqual([
    { bucket: "user:u1", requests: 2, tokens: 80, requestsPerMinute: 10, tokensPerMinute: 1000, requestsLevel: 8, tokensLevel: 920 },
    { bucket: "key:tok_u2", requests: 1, tokens: 0, requestsPerMinute: 5, tokensPerMinute: 1000, requestsLevel: 4, tokensLevel: 1000 },
  ]);
  expect(rates.takeAdmitted()).toEqual([]);
  // A settlement after the take is counted for the next one; a bucket without limits is never sent.
  rates.admit(principal("u3"), { requestsPerMinute: 0, tokensPerMinute: 0 }, 10);
  rates.admit(principal("u1"), FREE, 40).settle(100);
  expect(rates.takeAdmitted()).toEqual([{ bucket: "user:u1", requests: 1, tokens: 100, requestsPerMinute: 10, tokensPerMinute: 1000, requestsLevel: 7, tokensLevel: 820 }]);
});

test("what an exchange took and could not write is counted again", () => {
  const rates = limiter();
  rates.admit(principal("u1"), FREE, 100);
  const taken = rates.takeAdmitted();
  rates.admit(principal("u1"), FREE, 5);
  rates.returnAdmitted(taken);
  expect(rates.takeAdmitted()).toEqual([expect.objectContaining({ bucket: "user:u1", requests: 2, tokens: 105 })]);
});

test("a charge from other instances is taken from the bucket, into debt, and lengthens Retry-After", () => {
  const rates = limiter();
  rates.admit(principal("u1"), FREE, 0);
  rates.chargeShared({ bucket: "user:u1", requests: 14, tokens: 0, ...FREE });
  const limited = refusal(() => rates.admit(principal("u1"), FREE, 0));
  expect(limited.status).toBe(429);
  expect(limited.message).toContain("requests per minute");
  // 15 taken from 10: 5 in debt, so one request is 6 refills of 6 s away.
  expect(limited.headers?.["retry-after"]).toBe("36");
  expect(limited.headers?.["x-ratelimit-remaining-requests"]).toBe("0");
  // A charge is not an admission here: it is not sent on to the others.
  expect(rates.takeAdmitted()).toEqual([expect.objectContaining({ bucket: "user:u1", requests: 1, tokens: 0 })]);
});

test("a bucket not served here yet is made at the charged limits, so its first request here finds the charge", () => {
  const rates = limiter();
  rates.chargeShared({ bucket: "user:u9", requests: 10, tokens: 0, ...FREE });
  expect(refusal(() => rates.admit(principal("u9"), FREE, 0)).status).toBe(429);
  // Tokens: 950 of 1000 used elsewhere leaves 50, so a reservation of 60 waits.
  rates.chargeShared({ bucket: "user:u8", requests: 1, tokens: 950, ...FREE });
  expect(refusal(() => rates.admit(principal("u8"), FREE, 60)).message).toContain("tokens per minute");
  expect(rates.admit(principal("u8"), FREE, 40).headers["x-ratelimit-remaining-tokens"]).toBe("10");
});

test("a credit of tokens settled below their reservation elsewhere never fills a bucket past its capacity", () => {
  const rates = limiter();
  rates.admit(principal("u1"), FREE, 600);
  rates.chargeShared({ bucket: "user:u1", requests: 0, tokens: -300, ...FREE });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-tokens"]).toBe("700");
  rates.chargeShared({ bucket: "user:u1", requests: 0, tokens: -5000, ...FREE });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-tokens"]).toBe("1000");
});

test("a charge at other limits (another instance has not reloaded a change yet) keeps this bucket's limits and counts", () => {
  const rates = limiter();
  rates.admit(principal("u1"), FREE, 0);
  rates.chargeShared({ bucket: "user:u1", requests: 3, tokens: 0, requestsPerMinute: 600, tokensPerMinute: 0 });
  const granted = rates.admit(principal("u1"), FREE, 0);
  expect(granted.headers["x-ratelimit-limit-requests"]).toBe("10");
  expect(granted.headers["x-ratelimit-remaining-requests"]).toBe("5");
});

test("a take for publishing also gives every bucket not full, with counts of 0, and leaves out the full ones", () => {
  let now = clock;
  const rates = new RateLimiter(() => now);
  rates.admit(principal("u1"), FREE, 800).settle(800);
  rates.admit(principal("u2"), FREE, 0).settle(0);
  rates.takeAdmitted();
  now += 30_000;
  // Half a minute gave each its one request back, and u1 500 of its 800 tokens.
  expect(rates.takeAdmitted(true)).toEqual([{ bucket: "user:u1", requests: 0, tokens: 0, ...FREE, requestsLevel: 10, tokensLevel: 700 }]);
  expect(rates.takeAdmitted()).toEqual([]);
});

test("another instance's level lowers a bucket, refilled since it was written, and never raises it", () => {
  const now = clock;
  const rates = new RateLimiter(() => now);
  rates.admit(principal("u1"), FREE, 0);
  // Written 6 s ago at 2 requests left: 3 now, refilled at one each 6 s.
  rates.lowerShared({ bucket: "user:u1", requestsLevel: 2, tokensLevel: 1000, at: now - 6_000, ...FREE });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("2");
  rates.lowerShared({ bucket: "user:u1", requestsLevel: 9, tokensLevel: null, at: now, ...FREE });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("1");
  rates.lowerShared({ bucket: "user:u1", requestsLevel: 0.5, tokensLevel: null, at: now, ...FREE });
  expect(refusal(() => rates.admit(principal("u1"), FREE, 0)).headers?.["x-ratelimit-remaining-requests"]).toBe("0");
});

test("a level for a bucket not held here makes it at the level's limits when below them, and nothing when refilled full", () => {
  const rates = limiter();
  rates.lowerShared({ bucket: "user:u9", requestsLevel: 0, tokensLevel: 1000, at: clock - 60_000, ...FREE });
  expect(rates.size).toBe(0);
  rates.lowerShared({ bucket: "user:u9", requestsLevel: 1000, tokensLevel: -50, at: clock, ...FREE });
  expect(rates.size).toBe(1);
  const limited = refusal(() => rates.admit(principal("u9"), FREE, 1));
  expect(limited.message).toContain("tokens per minute");
  expect(limited.headers?.["x-ratelimit-remaining-requests"]).toBe("10");
});
