import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { chat, expectError, expectInteger, expectIso, expectMoney, userWithKey } from "./_helpers.ts";

let gw: TestGateway;
let other: { user: any; key: string };
let demoUserId: string;
const DEMO_REQUESTS = 57;
const OTHER_REQUESTS = 3;
const TOTAL = DEMO_REQUESTS + OTHER_REQUESTS;
let startedAt: number;
let finishedAt: number;
let all: any[];

beforeAll(async () => {
  gw = await startTestGateway();
  other = await userWithKey(gw, 5);
  startedAt = Date.now();
  for (let i = 0; i < DEMO_REQUESTS; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, DEMO_REQUESTS - i) }, () => chat(gw, gw.demoKey)));
    for (const response of batch) expect(response.status).toBe(200);
  }
  for (let i = 0; i < OTHER_REQUESTS; i++) expect((await chat(gw, other.key)).status).toBe(200);
  finishedAt = Date.now();
  all = (await gw.admin("GET", "/v1/admin/usage?limit=200")).body.usage;
  demoUserId = all.find((row: any) => row.user_id !== other.user.id)?.user_id;
});
afterAll(() => gw.close());

function expectUsageEntry(u: any): void {
  expect(typeof u.id).toBe("string");
  expect(u.id.length).toBeGreaterThan(0);
  expect(typeof u.user_id).toBe("string");
  expect(typeof u.model).toBe("string");
  expect(typeof u.endpoint).toBe("string");
  expectInteger(u.prompt_tokens);
  expectInteger(u.completion_tokens);
  expect(u.prompt_tokens).toBeGreaterThanOrEqual(0);
  expect(u.completion_tokens).toBeGreaterThanOrEqual(0);
  expectMoney(u.cost);
  expect(u.cost).toBeGreaterThanOrEqual(0);
  expectIso(u.timestamp);
}

describe("shape", () => {
  test("GET returns {usage, total, page, limit} with spec 2.12 log entries", async () => {
    const response = await gw.admin("GET", "/v1/admin/usage");
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.usage)).toBe(true);
    expectInteger(response.body.total);
    expectInteger(response.body.page);
    expectInteger(response.body.limit);
    for (const entry of response.body.usage) expectUsageEntry(entry);
  });

  test("every chat request has exactly one row: model demo-chat, endpoint the request path, time within the run", async () => {
    expect(all).toHaveLength(TOTAL);
    expect(new Set(all.map((u) => u.id)).size).toBe(TOTAL);
    for (const entry of all) {
      expect(entry.model).toBe("demo-chat");
      expect(entry.endpoint).toBe("/v1/chat/completions");
      expect(entry.prompt_tokens).toBeGreaterThan(0);
      expect(entry.completion_tokens).toBeGreaterThan(0);
      const t = Date.parse(entry.timestamp);
      expect(t).toBeGreaterThanOrEqual(startedAt - 1000);
      expect(t).toBeLessThanOrEqual(finishedAt + 1000);
    }
    expect(all.filter((u) => u.user_id === other.user.id)).toHaveLength(OTHER_REQUESTS);
    expect(all.filter((u) => u.user_id === demoUserId)).toHaveLength(DEMO_REQUESTS);
  });

  test("listed newest first", async () => {
    const times = all.map((u) => Date.parse(u.timestamp));
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!);
  });

  test("a priced model (demo-chat) costs money, and the user's total_usage and balance agree with the log", async () => {
    const rows = all.filter((u) => u.user_id === other.user.id);
    for (const row of rows) expect(row.cost).toBeGreaterThan(0);
    const spent = rows.reduce((sum, row) => sum + row.cost, 0);
    const user = (await gw.admin("GET", `/v1/admin/users/${other.user.id}`)).body;
    expect(user.total_usage).toBeCloseTo(spent, 6);
    expect(user.balance).toBeCloseTo(5 - spent, 6);
  });
});

describe("paging", () => {
  test("defaults: page 1, limit 50; total counts every row", async () => {
    const { body } = await gw.admin("GET", "/v1/admin/usage");
    expect(body.page).toBe(1);
    expect(body.limit).toBe(50);
    expect(body.usage).toHaveLength(50);
    expect(body.total).toBe(TOTAL);
  });

  test("page 2 returns the rest; pages do not overlap and cover every row", async () => {
    const p1 = (await gw.admin("GET", "/v1/admin/usage")).body;
    const p2 = (await gw.admin("GET", "/v1/admin/usage?page=2")).body;
    expect(p2.page).toBe(2);
    expect(p2.limit).toBe(50);
    expect(p2.total).toBe(TOTAL);
    expect(p2.usage).toHaveLength(TOTAL - 50);
    const ids = [...p1.usage, ...p2.usage].map((u: any) => u.id);
    expect(new Set(ids).size).toBe(TOTAL);
    expect(ids).toEqual(all.map((u) => u.id));
  });

  test("page and limit select the matching slice", async () => {
    const { body } = await gw.admin("GET", "/v1/admin/usage?page=4&limit=7");
    expect(body.page).toBe(4);
    expect(body.limit).toBe(7);
    expect(body.usage.map((u: any) => u.id)).toEqual(all.slice(21, 28).map((u) => u.id));
  });

  test("limit 200 (the maximum) is accepted; a page past the end is empty with the total", async () => {
    const max = await gw.admin("GET", "/v1/admin/usage?limit=200");
    expect(max.status).toBe(200);
    expect(max.body.limit).toBe(200);
    const past = await gw.admin("GET", "/v1/admin/usage?page=9&limit=10");
    expect(past.status).toBe(200);
    expect(past.body.usage).toEqual([]);
    expect(past.body.total).toBe(TOTAL);
  });

  for (const query of ["page=0", "limit=0", "limit=201", "page=-1", "limit=-1", "limit=abc", "page=abc", "limit=2.5", "page=1.5"]) {
    test(`?${query} is a 400`, async () => {
      expectError(await gw.admin("GET", `/v1/admin/usage?${query}`), 400, "invalid_request_error");
    });
  }
});

describe("filters", () => {
  test("user_id keeps only that user's rows, total included", async () => {
    const { body } = await gw.admin("GET", `/v1/admin/usage?user_id=${encodeURIComponent(other.user.id)}`);
    expect(body.total).toBe(OTHER_REQUESTS);
    expect(body.usage).toHaveLength(OTHER_REQUESTS);
    for (const entry of body.usage) expect(entry.user_id).toBe(other.user.id);
  });

  test("user_id with paging: total is the filtered count", async () => {
    const { body } = await gw.admin("GET", `/v1/admin/usage?user_id=${encodeURIComponent(demoUserId)}&page=2&limit=50`);
    expect(body.total).toBe(DEMO_REQUESTS);
    expect(body.usage).toHaveLength(DEMO_REQUESTS - 50);
    for (const entry of body.usage) expect(entry.user_id).toBe(demoUserId);
  });

  test("an unknown user_id gives an empty page with total 0", async () => {
    const { status, body } = await gw.admin("GET", "/v1/admin/usage?user_id=usr_nobody");
    expect(status).toBe(200);
    expect(body).toMatchObject({ usage: [], total: 0 });
  });

  test("a start/end window around the run includes every row; one before it none", async () => {
    const start = new Date(startedAt - 60_000).toISOString();
    const end = new Date(finishedAt + 60_000).toISOString();
    const inside = await gw.admin("GET", `/v1/admin/usage?start_date=${start}&end_date=${end}`);
    expect(inside.status).toBe(200);
    expect(inside.body.total).toBe(TOTAL);

    const before = await gw.admin("GET", `/v1/admin/usage?end_date=${new Date(startedAt - 60_000).toISOString()}`);
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(0);
    const after = await gw.admin("GET", `/v1/admin/usage?start_date=${new Date(finishedAt + 60_000).toISOString()}`);
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(0);
  });

  test("start_date cuts at a row's time: rows at or after it only", async () => {
    const pivot = all[Math.floor(all.length / 2)];
    const expected = all.filter((u) => Date.parse(u.timestamp) >= Date.parse(pivot.timestamp)).length;
    const { status, body } = await gw.admin("GET", `/v1/admin/usage?start_date=${pivot.timestamp}&limit=200`);
    expect(status).toBe(200);
    expect(body.total).toBe(expected);
    for (const entry of body.usage) expect(Date.parse(entry.timestamp)).toBeGreaterThanOrEqual(Date.parse(pivot.timestamp));
  });

  test("a zone offset typed with a bare '+' (which a query string reads as a space) is that offset", async () => {
    const pivot = all[Math.floor(all.length / 2)];
    // The pivot's time one hour ahead of UTC, e.g. 2026-11-21T15:32:44.847+01:00.
    const local = new Date(Date.parse(pivot.timestamp) + 3_600_000).toISOString().replace("Z", "+01:00");
    const encoded = await gw.admin("GET", `/v1/admin/usage?start_date=${local.replace("+", "%2B")}&limit=200`);
    const typed = await gw.admin("GET", `/v1/admin/usage?start_date=${local}&limit=200`);
    expect(encoded.status).toBe(200);
    expect(encoded.body.total).toBe(all.filter((u) => Date.parse(u.timestamp) >= Date.parse(pivot.timestamp)).length);
    expect({ status: typed.status, total: typed.body.total }).toEqual({ status: 200, total: encoded.body.total });
  });

  test("a time without a zone is UTC, as every timestamp shown, whatever the host's time zone", async () => {
    const pivot = all[Math.floor(all.length / 2)];
    const zoneless = pivot.timestamp.replace("Z", "");
    const expected = all.filter((u) => Date.parse(u.timestamp) >= Date.parse(pivot.timestamp)).length;
    const hostZone = process.env.TZ;
    process.env.TZ = "Asia/Kolkata";
    try {
      const { status, body } = await gw.admin("GET", `/v1/admin/usage?start_date=${zoneless}&limit=200`);
      expect({ status, total: body.total }).toEqual({ status: 200, total: expected });
    } finally {
      if (hostZone === undefined) delete process.env.TZ;
      else process.env.TZ = hostZone;
    }
  });

  test("a date-only end_date covers its whole day", async () => {
    const day = all[0].timestamp.slice(0, 10);
    const expected = all.filter((u) => u.timestamp.startsWith(day)).length;
    const { status, body } = await gw.admin("GET", `/v1/admin/usage?start_date=${day}&end_date=${day}`);
    expect(status).toBe(200);
    expect(body.total).toBe(expected);
    expect(expected).toBeGreaterThan(0);
  });

  test("dates combine with user_id", async () => {
    const start = new Date(startedAt - 60_000).toISOString();
    const { body } = await gw.admin("GET", `/v1/admin/usage?user_id=${encodeURIComponent(other.user.id)}&start_date=${start}`);
    expect(body.total).toBe(OTHER_REQUESTS);
  });

  test("years 0000 to 0099 are calendar years (Date.UTC reads them as 1900 to 1999)", async () => {
    for (const day of ["0050-01-01", "0096-02-29", "0000-02-29"]) {
      const { status, body } = await gw.admin("GET", `/v1/admin/usage?start_date=${day}`);
      expect({ day, status, total: body.total }).toEqual({ day, status: 200, total: all.length });
    }
    expect((await gw.admin("GET", "/v1/admin/usage?end_date=0050-12-31")).body.total).toBe(0);
    expectError(await gw.admin("GET", "/v1/admin/usage?start_date=0099-02-29"), 400, "invalid_request_error");
  });

  for (const [label, query] of [
    ["start_date=yesterday", "start_date=yesterday"],
    ["end_date=yesterday", "end_date=yesterday"],
    ["start_date=2026-13-45", "start_date=2026-13-45"],
    ["start_date=2026-02-30 (no such day)", "start_date=2026-02-30"],
    ["end_date=12/31/2026", "end_date=12%2F31%2F2026"],
    ["start_date=1700000000 (a Unix time)", "start_date=1700000000"],
    ["start after end", "start_date=2026-01-02&end_date=2026-01-01"],
    ["start after end (times)", "start_date=2026-01-01T12:00:00Z&end_date=2026-01-01T11:00:00Z"],
  ]) {
    test(`${label} is a 400`, async () => {
      expectError(await gw.admin("GET", `/v1/admin/usage?${query}`), 400, "invalid_request_error");
    });
  }
});
