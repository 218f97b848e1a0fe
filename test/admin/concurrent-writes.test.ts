import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { QueryLog } from "../helpers/query-log.ts";
import { waitFor } from "../billing/_support.ts";
import { createToken, createUser, expectError, getModels } from "./_helpers.ts";

/**
 * An admin write that checks a row and then changes it, while another instance (here another
 * connection on the same file) changes that row in between: the check must be made inside
 * the write's transaction, or it acts on a row that is no longer there or no longer so.
 */

let gw: TestGateway;
let other: OpenDatabase;
const queries = new QueryLog();

beforeAll(async () => {
  gw = await startTestGateway({ plugins: [queries] });
  other = openDatabase(`file:${join(gw.dir, "gateway.db")}`);
});

afterAll(async () => {
  await other.close();
  await gw.close();
});

/**
 * Sends an admin write while the other connection holds the write lock; once the gateway
 * waits for the lock (whatever it read before) the other connection runs `interpose` and
 * commits, and the write goes on. Returns the write's answer.
 */
async function writeAround(write: () => Promise<{ status: number; body: any }>, interpose: string): Promise<{ status: number; body: any }> {
  queries.clear();
  other.sql.run("BEGIN IMMEDIATE", []);
  let answer: Promise<{ status: number; body: any }>;
  try {
    answer = write();
    await waitFor("the gateway to wait for the write lock", () => queries.queries.some((query) => /^begin immediate/i.test(query.sql)));
    other.sql.run(interpose, []);
  } finally {
    other.sql.run("COMMIT", []);
  }
  return answer;
}

test("a PATCH re-enabling a token revoked after the PATCH read it is a 409, and the key stays refused", async () => {
  const user = await createUser(gw, { balance: 1 });
  const token = await createToken(gw, user.id);
  const answer = await writeAround(
    () => gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "active" }),
    `UPDATE tokens SET status = 'revoked' WHERE id = '${token.id}'`,
  );
  expectError(answer, 409, "conflict_error");
  expect((await gw.admin("GET", `/v1/admin/tokens/${token.id}`)).body.status).toBe("revoked");
  expect(await getModels(gw, token.key)).toBe(401);
});

test("a PATCH of a channel deleted after the PATCH read it is a 404, not a 500", async () => {
  const created = await gw.admin("POST", "/v1/admin/channels", { name: "raced", type: "openai", base_url: "http://127.0.0.1:9/v1", models: ["raced-model"] });
  expect(created.status).toBe(201);
  const answer = await writeAround(
    () => gw.admin("PATCH", `/v1/admin/channels/${created.body.id}`, { priority: 5 }),
    `DELETE FROM channels WHERE id = '${created.body.id}'`,
  );
  expectError(answer, 404, "not_found_error");
});
