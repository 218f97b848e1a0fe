import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.ts";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import type { RateUsageTable } from "../../src/db/schema.ts";
import { RateExchange } from "../../src/limits/rate-exchange.ts";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { FREE, principal, refusal } from "./_support.ts";

/**
 * How an instance takes the rows of rate_usage, driven directly on a real database file: it
 * begins from the levels other instances (or its own predecessor) left (RateExchange.seed),
 * takes a row it has never seen by its level, and reads in pages, while others write in pages,
 * without missing a row.
 */

const clock = Date.parse("2026-11-21T10:00:00Z");
let dir: string;
let database: OpenDatabase;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rate-exchange-rows-"));
  database = openDatabase(`file:${join(dir, "gateway.db")}`);
  await migrate(database.db, () => clock);
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes another instance's row of `bucket`, at the free plan's limits unless told otherwise. */
async function writeRow(row: Partial<RateUsageTable> & Pick<RateUsageTable, "instance_id" | "bucket">): Promise<void> {
  const full: RateUsageTable = { requests: 1, tokens: 0, requests_per_minute: 10, tokens_per_minute: 1000, updated_at: clock, requests_level: null, tokens_level: null, ...row };
  await database.db
    .insertInto("rate_usage")
    .values(full)
    .onConflict((conflict) => conflict.columns(["instance_id", "bucket"]).doUpdateSet(full))
    .execute();
}

/** A new instance on the database: its limiter and exchange, seeded. */
async function start(alone: boolean): Promise<{ rates: RateLimiter; exchange: RateExchange }> {
  const rates = new RateLimiter(() => clock);
  const exchange = new RateExchange(database.db, rates, { id: `inst_${crypto.randomUUID().slice(0, 8)}`, alone }, () => clock);
  await exchange.seed();
  return { rates, exchange };
}

const remaining = (rates: RateLimiter, user: string) => rates.admit(principal(user), FREE, 0).headers["x-ratelimit-remaining-requests"];

test("a start lowers each bucket to the lowest level the last minute's rows hold for it, each refilled from its row's time", async () => {
  // 2 left 12 s ago is 4 now (one back every 6 s); 5 left now is 5: the lowest is 4.
  await writeRow({ instance_id: "inst_x", bucket: "user:s1", requests_level: 2, tokens_level: 1000, updated_at: clock - 12_000 });
  await writeRow({ instance_id: "inst_y", bucket: "user:s1", requests_level: 5, tokens_level: 1000 });
  // Tokens in debt a minute and more ago: older rows are not read.
  await writeRow({ instance_id: "inst_x", bucket: "user:s2", requests_level: 10, tokens_level: -2000, updated_at: clock - 60_001 });
  const { rates } = await start(true);
  expect(rates.size).toBe(1);
  expect(remaining(rates, "s1")).toBe("3");
  expect(rates.admit(principal("s2"), FREE, 500).headers["x-ratelimit-remaining-tokens"]).toBe("500");
});

test("a seeded bucket is made at its row's limits; with other limits now, it starts fresh at them", async () => {
  await writeRow({ instance_id: "inst_x", bucket: "user:s3", requests_level: 0.2, tokens_level: 1000 });
  await writeRow({ instance_id: "inst_x", bucket: "user:s4", requests_level: 0.2, tokens_level: 1000 });
  const { rates } = await start(true);
  const limited = refusal(() => rates.admit(principal("s3"), FREE, 0));
  expect(limited.status).toBe(429);
  expect(limited.headers?.["x-ratelimit-limit-requests"]).toBe("10");
  const raised = rates.admit(principal("s4"), { ...FREE, requestsPerMinute: 20 }, 0);
  expect(raised.headers["x-ratelimit-remaining-requests"]).toBe("19");
});

test("seeded rows count as seen: the first exchange charges what they grew by since, and a row never seen only lowers to its level", async () => {
  await writeRow({ instance_id: "inst_x", bucket: "user:s5", requests: 50, requests_level: 8, tokens_level: 1000 });
  const { rates, exchange } = await start(false);
  // Two more admitted at inst_x, written later; its level says 9 (it had not read a charge yet): 8 - 2 is lower.
  await writeRow({ instance_id: "inst_x", bucket: "user:s5", requests: 52, requests_level: 9, tokens_level: 1000, updated_at: clock + 1 });
  // A row made since the start, with 500 admitted over its life: its level, 7, is what counts.
  await writeRow({ instance_id: "inst_z", bucket: "user:s6", requests: 500, requests_level: 7, tokens_level: 1000 });
  await exchange.run();
  expect(remaining(rates, "s5")).toBe("5");
  expect(remaining(rates, "s6")).toBe("6");
});

test("rows another instance writes, a page per transaction, while this one reads them a page per statement, are all charged", async () => {
  // Two instances sharing the test's connection (two connections in one thread would wait on
  // each other's locks): their statements interleave between pages. The clock stands still, so
  // nothing refills; the writer's transactions still each get a later time.
  const reader = await start(false);
  const writer = await start(false);
  // Three pages of buckets, at 100 requests a minute; the writer admits 2 from each per round.
  // It writes them in the order it first admitted them, which here spreads each page it writes
  // over the whole key order the reader reads in: each page written falls in every page read.
  const users = Array.from({ length: 1_200 }, (_, i) => `p${String((i * 7) % 1_200).padStart(4, "0")}`);
  const limits = { ...FREE, requestsPerMinute: 100 };
  const admitEach = () => {
    for (const user of users) for (let i = 0; i < 2; i++) writer.rates.admit(principal(user), limits, 0).settle(0);
  };
  admitEach();
  await writer.exchange.run();
  await reader.exchange.run();
  for (let round = 0; round < 3; round++) {
    admitEach();
    await Promise.all([writer.exchange.run(), reader.exchange.run()]);
  }
  await reader.exchange.run();
  // 8 of 100 taken elsewhere, and this one: 91 left in every bucket.
  const left = new Set(users.map((user) => reader.rates.admit(principal(user), limits, 0).headers["x-ratelimit-remaining-requests"]));
  expect([...left]).toEqual(["91"]);
});
