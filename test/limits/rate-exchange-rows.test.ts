import { afterAll, beforeAll, expect, test } from "bun:test";
import type { OpenDatabase } from "../../src/db/open-database.ts";
import { SLOT_MS, type WindowEntries } from "../../src/limits/minute-window.ts";
import { RateExchange } from "../../src/limits/rate-exchange.ts";
import { RateLimiter } from "../../src/limits/rate-limiter.ts";
import { upsertRateWindows } from "../../src/limits/rate-window-rows.ts";
import { openTempDatabase, type TempDatabase } from "../helpers/temp-database.ts";
import { FREE, principal } from "./_support.ts";

/**
 * How an instance takes the rows of rate_windows, driven directly on a real database file: it
 * begins from the windows other instances (or its own predecessor) left (RateExchange.seed),
 * takes each later row in place of its writer's earlier one, and reads in pages, while others
 * write in pages, without missing a row.
 */

const clock = Date.parse("2026-11-21T10:00:00Z");
const SLOT = clock / SLOT_MS;
let temp: TempDatabase;
let database: OpenDatabase;
beforeAll(async () => {
  temp = await openTempDatabase("rate-exchange-rows-", () => clock);
  database = temp.database;
});
afterAll(() => temp.remove());

/** Writes another instance's row of `bucket`: `requests` by slot, no tokens, unless told otherwise. */
async function writeRow(instance: string, bucket: string, requests: WindowEntries, { tokens = [] as WindowEntries, at = clock } = {}): Promise<void> {
  await upsertRateWindows(database.db, instance, [{ bucket, requests, tokens }], at);
}

/** A new instance on the database: its limiter and exchange, seeded. */
async function start(alone: boolean, now = () => clock): Promise<{ rates: RateLimiter; exchange: RateExchange }> {
  const rates = new RateLimiter(now);
  const exchange = new RateExchange(database.db, rates, { id: `inst_${crypto.randomUUID().slice(0, 8)}`, alone }, now);
  await exchange.seed();
  return { rates, exchange };
}

const remaining = (rates: RateLimiter, user: string) => rates.admit(principal(user), FREE, 0).headers["x-ratelimit-remaining-requests"];

test("a start counts the windows of every row of the last minute, whoever wrote them; what has aged out counts for nothing", async () => {
  await writeRow("inst_x", "user:s1", [SLOT - 700, 5, SLOT - 120, 2], { at: clock - 12_000 });
  await writeRow("inst_y", "user:s1", [SLOT, 3]);
  // A row written more than a minute ago is not read: all it held has aged out.
  await writeRow("inst_x", "user:s2", [], { tokens: [SLOT - 620, 2000], at: clock - 61_001 });
  const { rates } = await start(true);
  expect(rates.size).toBe(1);
  // 2 and 3 of 10 used elsewhere, and this one.
  expect(remaining(rates, "s1")).toBe("4");
  expect(rates.admit(principal("s2"), FREE, 500).headers["x-ratelimit-remaining-tokens"]).toBe("500");
});

test("a later row of an instance takes the place of its earlier one; a row whose text is damaged is passed over", async () => {
  await writeRow("inst_x", "user:s5", [SLOT, 2]);
  const { rates, exchange } = await start(false);
  await writeRow("inst_x", "user:s5", [SLOT, 4], { at: clock + 1 });
  await database.db.insertInto("rate_windows").values({ instance_id: "inst_z", bucket: "user:s5", updated_at: clock, windows: '{"requests":[[1,"x"]]}' }).execute();
  await writeRow("inst_z", "user:s6", [SLOT, 3]);
  await exchange.run();
  expect(remaining(rates, "s5")).toBe("5");
  expect(remaining(rates, "s6")).toBe("6");
});

test("a row damaged to hold a negative amount is passed over rather than giving its bucket room", async () => {
  const windows = JSON.stringify({ base: SLOT, requests: [0, -5], tokens: [] });
  await database.db.insertInto("rate_windows").values({ instance_id: "inst_minus", bucket: "user:s8", updated_at: clock, windows }).execute();
  await writeRow("inst_x", "user:s8", [SLOT, 3]);
  const { rates } = await start(true);
  // inst_x's 3 and this one.
  expect(remaining(rates, "s8")).toBe("6");
});

test("a row read again, not rewritten since, is not counted twice", async () => {
  await writeRow("inst_w", "user:s7", [SLOT, 1]);
  const { rates, exchange } = await start(false);
  expect(remaining(rates, "s7")).toBe("8");
  await exchange.run();
  expect(remaining(rates, "s7")).toBe("7");
});

test("rows another instance writes, a page per transaction, while this one reads them a page per statement, are all charged", async () => {
  // Two instances sharing the test's connection (two connections in one thread would wait on
  // each other's locks): their statements interleave between pages. The clock stands still, so
  // nothing ages out; the writer's transactions still each get a later time.
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

test("an instance whose clock stepped back deletes no row of another that still counts", async () => {
  // Ten minutes ahead, until the clock is stepped back: its writes keep their order, so they stay dated ahead.
  let stepped = clock + 600_000;
  const ahead = await start(true, () => stepped);
  ahead.rates.admit(principal("c1"), FREE, 0);
  await ahead.exchange.run();
  stepped = clock;
  await writeRow("inst_live", "user:c2", [SLOT, 4]);
  ahead.rates.admit(principal("c1"), FREE, 0);
  await ahead.exchange.run();
  const { rates } = await start(true);
  expect(remaining(rates, "c2")).toBe("5");
});
