import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { QueryLog } from "../helpers/query-log.ts";
import type { UsageLogInsert } from "../../src/db/schema.ts";

/**
 * The usage listing's `total` and offset pages come from per-day counts kept by triggers
 * (migration 014, src/usage/usage-day-counts.ts) and a row-by-row count of the days at the
 * ends of the range: checked against a listing worked out from the rows themselves.
 */

const DAY = 86_400_000;
/** Midnight UTC, 6 days before the newest rows. */
const DAY0 = Math.floor(Date.UTC(2026, 2, 10) / DAY) * DAY;
const log = new QueryLog();
let gw: TestGateway;
let rows: UsageLogInsert[];

function usageRow(createdAt: number, n: number, userId: string): UsageLogInsert {
  return {
    id: `use_${String(n).padStart(6, "0")}`, request_id: `req_${n}`, user_id: userId, token_id: "tok_x", model: "m",
    endpoint: "/v1/chat/completions", prompt_tokens: 1, completion_tokens: 1, cost_micros: 0, status: 200,
    latency_ms: 1, channel_id: null, stream: 0, created_at: createdAt,
  };
}

beforeAll(async () => {
  gw = await startTestGateway({ plugins: [log] });
  rows = [];
  let seed = 11;
  const next = (n: number) => (seed = (seed * 48_271) % 2_147_483_647) % n;
  // Rows on day edges (the first and last millisecond), in the same millisecond, and anywhere.
  for (let day = 0; day < 6; day++) {
    for (const at of [0, DAY - 1, 3_600_000, 3_600_000]) rows.push(usageRow(DAY0 + day * DAY + at, rows.length, "u1"));
    for (let i = 0; i < 20 + next(30); i++) rows.push(usageRow(DAY0 + day * DAY + next(DAY), rows.length, next(2) === 0 ? "u1" : "u2"));
  }
  await gw.database.db.insertInto("usage_logs").values(rows).execute();
});
afterAll(() => gw.close());

/** The listing as the rows themselves give it: newest first, by (created_at, id). */
function expected(from: number | undefined, to: number | undefined, page: number, limit: number, userId?: string) {
  const matching = rows
    .filter((r) => (from === undefined || r.created_at >= from) && (to === undefined || r.created_at <= to) && (!userId || r.user_id === userId))
    .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
  return { total: matching.length, ids: matching.slice((page - 1) * limit, page * limit).map((r) => r.id) };
}

async function listed(query: string) {
  const response = await gw.admin("GET", `/v1/admin/usage?${query}`);
  expect(response.status).toBe(200);
  return { total: response.body.total, ids: response.body.usage.map((r: { id: string }) => r.id) };
}

const iso = (ms: number) => new Date(ms).toISOString();
const date = (ms: number) => iso(ms).slice(0, 10);

/** [query, from, to]: ranges from none to within one day, on edges and across them. */
const RANGES: [string, number | undefined, number | undefined][] = [
  ["", undefined, undefined],
  [`start_date=${iso(DAY0 + 2 * DAY + 5_000_000)}`, DAY0 + 2 * DAY + 5_000_000, undefined],
  [`end_date=${iso(DAY0 + 3 * DAY + 7_000_000)}`, undefined, DAY0 + 3 * DAY + 7_000_000],
  [`start_date=${date(DAY0 + DAY)}&end_date=${date(DAY0 + 4 * DAY)}`, DAY0 + DAY, DAY0 + 5 * DAY - 1],
  [`start_date=${iso(DAY0 + DAY)}&end_date=${iso(DAY0 + 2 * DAY)}`, DAY0 + DAY, DAY0 + 2 * DAY],
  [`start_date=${iso(DAY0 + 2 * DAY + 1)}&end_date=${iso(DAY0 + 4 * DAY - 2)}`, DAY0 + 2 * DAY + 1, DAY0 + 4 * DAY - 2],
  [`start_date=${iso(DAY0 + 3 * DAY + 100)}&end_date=${iso(DAY0 + 3 * DAY + 50_000_000)}`, DAY0 + 3 * DAY + 100, DAY0 + 3 * DAY + 50_000_000],
  [`start_date=${date(DAY0 - 10 * DAY)}&end_date=${date(DAY0 - 9 * DAY)}`, DAY0 - 10 * DAY, DAY0 - 8 * DAY - 1],
];

async function expectEveryPageRight(): Promise<void> {
  for (const [query, from, to] of RANGES) {
    for (const limit of [1, 7, 50]) {
      const pages = Math.ceil(expected(from, to, 1, limit).total / limit) + 1;
      for (const page of new Set([1, 2, Math.ceil(pages / 2), pages - 1, pages].filter((p) => p >= 1))) {
        const label = `${query} limit=${limit} page=${page}`;
        expect({ label, ...(await listed(`${query}&limit=${limit}&page=${page}`)) }).toEqual({ label, ...expected(from, to, page, limit) });
      }
    }
  }
  expect(await listed("user_id=u2&limit=7&page=2")).toEqual(expected(undefined, undefined, 2, 7, "u2"));
}

test("total and pages match the rows, for ranges across days, within one, on their edges and outside them", async () => {
  await expectEveryPageRight();
});

test("the whole log's total reads the day counts, not the rows, and its last page steps over less than a day", async () => {
  log.clear();
  const { total } = await listed("limit=5");
  expect(total).toBe(rows.length);
  expect(log.reading("usage_logs").filter((query) => /count\(\*\)/i.test(query.sql))).toEqual([]);
  log.clear();
  await listed(`limit=5&page=${Math.ceil(rows.length / 5)}`);
  const [pageRead] = log.reading("usage_logs");
  const skipped = Number(pageRead!.parameters.at(-1));
  const busiestDay = Math.max(...(await gw.database.db.selectFrom("usage_days").select("rows").execute()).map((d) => d.rows));
  expect(skipped).toBeLessThan(busiestDay);
});

test("deleted rows leave the counts, and the listing stays right", async () => {
  const gone = rows.filter((_, i) => i % 5 === 0).map((r) => r.id);
  await gw.database.db.deleteFrom("usage_logs").where("id", "in", gone).execute();
  rows = rows.filter((r) => !gone.includes(r.id));
  await expectEveryPageRight();
});
