import { expect, test } from "bun:test";
import type { Channel } from "../../src/channels/channel.ts";
import { ChannelBreaker } from "../../src/dispatch/channel-breaker.ts";
import { backoffDelayMs, MAX_BACKOFF_MS, withFailover } from "../../src/dispatch/with-failover.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { UpstreamError } from "../../src/upstreams/upstream-error.ts";

/**
 * A client that leaves is a 499 on its usage row wherever it leaves: during an attempt, in
 * the pause between attempts, or before the first one (while its hold waited). Before, the
 * last two were recorded as the previous attempt's 502 or as a 504 for a deadline that never
 * passed.
 */

const channel = (id: string): Channel => ({
  id, name: id, type: "openai", baseUrl: "http://127.0.0.1:9", apiKey: null, models: ["m"], modelMap: {}, priority: 0, weight: 1, status: "active", createdAt: 0,
});
const CHANNELS = [channel("first"), channel("second")];
const breaker = () => new ChannelBreaker(3, 30_000, Date.now);

async function statusOf(run: Promise<unknown>): Promise<number> {
  try {
    await run;
    return 200;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return (error as GatewayError).status;
  }
}

test("the client leaves in the pause after a failed attempt: 499, and the next channel is not tried", async () => {
  const client = new AbortController();
  const tried: string[] = [];
  const run = withFailover(CHANNELS, async (c) => {
    tried.push(c.id);
    // The client goes once this attempt has failed, while the backoff (12 ms at least) runs.
    setTimeout(() => client.abort(), 0);
    throw new UpstreamError("status", "Upstream failed: 503", 503);
  }, { signal: client.signal, clientSignal: client.signal, breaker: breaker(), backoffMs: 200 });
  expect(await statusOf(run)).toBe(499);
  expect(tried).toEqual(["first"]);
});

test("the client left before the first attempt: 499, no channel tried", async () => {
  const client = new AbortController();
  client.abort();
  const tried: string[] = [];
  const run = withFailover(CHANNELS, async (c) => void tried.push(c.id), { signal: client.signal, clientSignal: client.signal, breaker: breaker() });
  expect(await statusOf(run)).toBe(499);
  expect(tried).toEqual([]);
});

test("the deadline passed with the client still there: 504", async () => {
  const deadline = new AbortController();
  deadline.abort();
  const run = withFailover(CHANNELS, async () => "never", { signal: deadline.signal, clientSignal: new AbortController().signal, breaker: breaker() });
  expect(await statusOf(run)).toBe(504);
});

test("the pause between attempts doubles from the base, is jittered, and stops growing at MAX_BACKOFF_MS", () => {
  const middle = () => 0.5;
  expect([1, 2, 3, 4].map((attempts) => backoffDelayMs(attempts, 25, middle))).toEqual([25, 50, 100, 200]);
  // Ten failed channels in: 25 * 2^9 = 12.8 s uncapped.
  expect(backoffDelayMs(10, 25, middle)).toBe(MAX_BACKOFF_MS);
  expect(backoffDelayMs(10, 25, () => 0)).toBe(MAX_BACKOFF_MS / 2);
  expect(backoffDelayMs(10, 25, () => 0.999)).toBeCloseTo(MAX_BACKOFF_MS * 1.499);
  expect(backoffDelayMs(1, 25, () => 0)).toBe(12.5);
});
