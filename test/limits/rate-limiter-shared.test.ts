import { expect, test } from "bun:test";
import { SLOT_MS } from "../../src/limits/minute-window.ts";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { FREE, principal, refusal } from "./_support.ts";

/**
 * What the rate limiter gives and takes for the exchange between instances: the windows of
 * what this instance admitted (tokens net of settlement), and the other instances' windows,
 * which count against its limits until they age out.
 */

const T0 = Date.parse("2026-11-21T10:00:00Z");
const SLOT = T0 / SLOT_MS;

test("a take gives each changed bucket's own windows by slot, tokens net of settlement, and then only what changed since", () => {
  let now = T0;
  const rates = new RateLimiter(() => now);
  const first = rates.admit(principal("u1"), FREE, 100);
  rates.admit(principal("u1"), FREE, 50);
  rates.admit(principal("u2", { requestsPerMinute: 5 }), { ...FREE, requestsPerMinute: 5 }, 0);
  now += 2_000;
  first.settle(30);
  expect(rates.takeChanged()).toEqual([
    { bucket: "user:u1", requests: [SLOT, 2], tokens: [SLOT, 80] },
    { bucket: "key:tok_u2", requests: [SLOT, 1], tokens: [] },
  ]);
  expect(rates.takeChanged()).toEqual([]);
  // A settlement after the take makes the bucket changed again; a request no limit applies to is not counted.
  rates.admit(principal("u3"), { requestsPerMinute: 0, tokensPerMinute: 0 }, 10);
  rates.admit(principal("u1"), FREE, 40).settle(100);
  expect(rates.takeChanged()).toEqual([{ bucket: "user:u1", requests: [SLOT, 2, SLOT + 20, 1], tokens: [SLOT, 80, SLOT + 20, 100] }]);
});

test("what an exchange took and could not write is taken again", () => {
  const rates = new RateLimiter(() => T0);
  rates.admit(principal("u1"), FREE, 100);
  const taken = rates.takeChanged();
  rates.returnChanged(taken);
  expect(rates.takeChanged()).toEqual(taken);
});

test("another instance's windows count against this one's limits, replace what it published before, and lengthen Retry-After", () => {
  let now = T0;
  const rates = new RateLimiter(() => now);
  rates.admit(principal("u1"), FREE, 0);
  now += 10_000;
  rates.setPeerWindows("inst_b", { bucket: "user:u1", requests: [SLOT + 50, 9], tokens: [] });
  const limited = refusal(() => rates.admit(principal("u1"), FREE, 0));
  expect(limited.status).toBe(429);
  expect(limited.message).toContain("requests per minute");
  // One of the 10 must age out: this instance's own, at T0 + 60 s, 50 s from now.
  expect(limited.headers?.["retry-after"]).toBe("50");
  expect(limited.headers?.["x-ratelimit-remaining-requests"]).toBe("0");
  // Until all of them have: the other's, taken at T0 + 5 s.
  expect(limited.headers?.["x-ratelimit-reset-requests"]).toBe("55s");
  // A later row of the same instance replaces its earlier one.
  rates.setPeerWindows("inst_b", { bucket: "user:u1", requests: [SLOT + 50, 3], tokens: [] });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("5");
  // Another instance's windows are never published again from here.
  expect(rates.takeChanged()).toEqual([{ bucket: "user:u1", requests: [SLOT, 1, SLOT + 100, 1], tokens: [] }]);
});

test("a bucket not served here yet is made from another instance's windows, so its first request here finds them", () => {
  const rates = new RateLimiter(() => T0);
  rates.setPeerWindows("inst_b", { bucket: "user:u9", requests: [SLOT, 10], tokens: [] });
  expect(refusal(() => rates.admit(principal("u9"), FREE, 0)).status).toBe(429);
  // Tokens: 950 of 1000 used elsewhere leaves 50, so a reservation of 60 waits.
  rates.setPeerWindows("inst_b", { bucket: "user:u8", requests: [SLOT, 1], tokens: [SLOT, 950] });
  expect(refusal(() => rates.admit(principal("u8"), FREE, 60)).message).toContain("tokens per minute");
  expect(rates.admit(principal("u8"), FREE, 40).headers["x-ratelimit-remaining-tokens"]).toBe("10");
  // Windows that hold nothing any more make no bucket.
  rates.setPeerWindows("inst_b", { bucket: "user:u7", requests: [SLOT - 600, 10], tokens: [] });
  expect(rates.size).toBe(2);
});

test("windows of several instances add up, and each ages out on its own", () => {
  let now = T0 + 30_000;
  const rates = new RateLimiter(() => now);
  rates.setPeerWindows("inst_b", { bucket: "user:u1", requests: [SLOT, 4], tokens: [] });
  rates.setPeerWindows("inst_c", { bucket: "user:u1", requests: [SLOT + 300, 5], tokens: [] });
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("0");
  now = T0 + 60_000;
  // inst_b's 4 aged out; inst_c's 5, this instance's first and this request count.
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("3");
});

test("a changed limit applies at once to what the window holds", () => {
  const rates = new RateLimiter(() => T0);
  for (let i = 0; i < 5; i++) rates.admit(principal("u1"), FREE, 0);
  expect(refusal(() => rates.admit(principal("u1"), { ...FREE, requestsPerMinute: 5 }, 0)).status).toBe(429);
  expect(rates.admit(principal("u1"), { ...FREE, requestsPerMinute: 20 }, 0).headers["x-ratelimit-remaining-requests"]).toBe("14");
});

test("a reservation above the token limit reserves the whole limit rather than waiting forever, and settles to the actual", () => {
  const rates = new RateLimiter(() => T0);
  const grant = rates.admit(principal("u1"), FREE, 5_000);
  expect(grant.headers["x-ratelimit-remaining-tokens"]).toBe("0");
  grant.settle(1_400);
  const limited = refusal(() => rates.admit(principal("u1"), FREE, 1));
  expect(limited.message).toContain("tokens per minute");
  expect(limited.headers?.["x-ratelimit-remaining-tokens"]).toBe("0");
  // A request that reserves no tokens is not held back by tokens used past the limit.
  expect(rates.admit(principal("u1"), FREE, 0).headers["x-ratelimit-remaining-requests"]).toBe("8");
});
