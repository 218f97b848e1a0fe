import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { chat, expectError } from "./_helpers.ts";
import { QueryLog, queryPlan } from "../helpers/query-log.ts";

let gw: TestGateway;
const log = new QueryLog();

async function chats(count: number): Promise<void> {
  for (let i = 0; i < count; i++) expect((await chat(gw, gw.demoKey)).status).toBe(200);
}

async function usagePage(query: string): Promise<{ ids: string[]; next: string | null; body: any }> {
  const response = await gw.admin("GET", `/v1/admin/usage?${query}`);
  expect(response.status).toBe(200);
  return { ids: response.body.usage.map((row: { id: string }) => row.id), next: response.body.next_cursor, body: response.body };
}

beforeAll(async () => {
  gw = await startTestGateway({ plugins: [log] });
  await chats(23);
});
afterAll(() => gw.close());

test("following next_cursor walks every row once, newest first, and the last page's next_cursor is null", async () => {
  const everything = await usagePage("limit=200");
  expect(everything.ids).toHaveLength(23);
  expect(everything.next).toBeNull();

  const walked: string[] = [];
  let page = await usagePage("limit=5");
  walked.push(...page.ids);
  while (page.next !== null) {
    page = await usagePage(`limit=5&cursor=${encodeURIComponent(page.next)}`);
    walked.push(...page.ids);
  }
  expect(walked).toEqual(everything.ids);
});

test("rows that arrive between pages do not shift the next page, as they shift an offset page", async () => {
  const before = (await usagePage("limit=200")).ids;
  const first = await usagePage("limit=10");
  expect(first.ids).toEqual(before.slice(0, 10));
  await chats(3);

  const next = await usagePage(`limit=10&cursor=${encodeURIComponent(first.next!)}`);
  expect(next.ids).toEqual(before.slice(10, 20));
  expect(next.body.total).toBe(before.length + 3);
  // The spec's offset page 2 now starts 3 rows back, inside the page already read.
  const offsetPage = await usagePage("limit=10&page=2");
  expect(offsetPage.ids.slice(0, 3)).toEqual(first.ids.slice(7, 10));
});

test("a cursor keeps the filters: dates and user_id still apply after it", async () => {
  const all = await usagePage("limit=200");
  const cursor = encodeURIComponent((await usagePage("limit=1")).next!);
  expect((await usagePage(`limit=200&cursor=${cursor}`)).ids).toEqual(all.ids.slice(1));
  expect((await usagePage(`limit=200&cursor=${cursor}&end_date=2000-01-01`)).ids).toEqual([]);
  expect((await usagePage(`limit=200&cursor=${cursor}&user_id=nobody`)).ids).toEqual([]);
});

test("a cursor page seeks to its place in the log's key, not scans down to it from the newest row", async () => {
  const cursor = encodeURIComponent((await usagePage("limit=3")).next!);
  log.clear();
  await usagePage(`limit=5&cursor=${cursor}`);
  const [pageRead] = log.reading("usage_logs").filter((query) => /\blimit\b/i.test(query.sql));
  const plan = (await queryPlan(gw.database.db, pageRead!)).join(" | ");
  expect(plan).toContain("SEARCH usage_logs USING PRIMARY KEY");
  expect(plan).not.toContain("SCAN");
});

test.each([
  ["a cursor that is not one the gateway gave", "cursor=abc"],
  ["a cursor with a bad id", "cursor=123.a%20b"],
  ["page and cursor together", "page=2&cursor=1.req_x"],
])("%s is a 400", async (_label, query) => {
  expectError(await gw.admin("GET", `/v1/admin/usage?${query}`), 400, "invalid_request_error");
});
