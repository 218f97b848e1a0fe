import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { QueryLog, queryPlan } from "../helpers/query-log.ts";
import { createToken, createUser, uniqueEmail } from "./_helpers.ts";

/**
 * The admin API's reads at an operator's scale: each is planned as an index search or an
 * index walk, never a scan of the table or a sort of all of it (a page of 20,000 users sorted
 * them all). Checked on SQLite's plan for the queries each request ran.
 */

const log = new QueryLog();
let gw: TestGateway;
let user: { id: string };

beforeAll(async () => {
  gw = await startTestGateway({ plugins: [log] });
  user = await createUser(gw);
  for (let i = 0; i < 3; i++) await createToken(gw, user.id);
});
afterAll(() => gw.close());

/** The plans of the queries `request` ran that read `table`, counts of rows left out. */
async function plansOf(table: string, request: () => Promise<{ status: number }>): Promise<string[]> {
  log.clear();
  expect((await request()).status).toBeLessThan(300);
  const queries = log.reading(table).filter((query) => !/\bcount\(\*\)/i.test(query.sql));
  expect(queries.length).toBeGreaterThan(0);
  return Promise.all(queries.map(async (query) => (await queryPlan(gw.database.db, query)).join(" | ")));
}

test.each([
  ["a page of users", "users", "GET", "/v1/admin/users?page=2&limit=1"],
  ["a page of tokens", "tokens", "GET", "/v1/admin/tokens?page=2&limit=1"],
  ["every token", "tokens", "GET", "/v1/admin/tokens"],
])("%s walks an index in the listing's order, with no sort of the table", async (_label, table, method, path) => {
  for (const plan of await plansOf(table, () => gw.admin(method, path))) {
    expect(plan).not.toContain("TEMP B-TREE");
    expect(plan).toMatch(/USING (COVERING )?INDEX/);
  }
});

test("a new user's email and a changed one are checked against the others by an index", async () => {
  const created = await plansOf("users", () => gw.admin("POST", "/v1/admin/users", { email: uniqueEmail() }));
  const changed = await plansOf("users", () => gw.admin("PATCH", `/v1/admin/users/${user.id}`, { email: uniqueEmail() }));
  for (const plan of [...created, ...changed]) expect(plan).not.toMatch(/^SCAN|\| SCAN/);
});
