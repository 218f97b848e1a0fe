/**
 * README: `last_used` is kept in memory and written with the next batch; the admin listing
 * shows the newest use at once, before any flush.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, getModels, postChat } from "./support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function listed(tokenId: string) {
  const response = await gw.admin("GET", "/v1/admin/tokens");
  expect(response.status).toBe(200);
  const token = response.body.tokens.find((t: { id: string }) => t.id === tokenId);
  expect(token).toBeDefined();
  return token;
}

test("a fresh token shows last_used null, then an ISO time right after a GET /v1/models", async () => {
  const { tokenId, key, body } = await createToken(gw);
  expect(body.last_used).toBeNull();
  expect((await listed(tokenId)).last_used).toBeNull();

  const before = Date.now();
  expect((await getModels(gw, key)).status).toBe(200);
  const after = Date.now();

  const lastUsed = (await listed(tokenId)).last_used;
  expect(typeof lastUsed).toBe("string");
  expect(lastUsed).toMatch(ISO);
  const time = Date.parse(lastUsed);
  expect(time).toBeGreaterThanOrEqual(before - 5);
  expect(time).toBeLessThanOrEqual(after + 5);
});

test("last_used moves forward with a later request (chat)", async () => {
  const { tokenId, key } = await createToken(gw);
  expect((await getModels(gw, key)).status).toBe(200);
  const first = Date.parse((await listed(tokenId)).last_used);
  await new Promise((resolve) => setTimeout(resolve, 15));
  expect((await postChat(gw, key)).status).toBe(200);
  const second = Date.parse((await listed(tokenId)).last_used);
  expect(second).toBeGreaterThan(first);
});

test("a refused request (disabled token) does not count as a use", async () => {
  const { tokenId, key } = await createToken(gw);
  expect((await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { status: "disabled" })).status).toBe(200);
  expect((await getModels(gw, key)).status).toBe(401);
  expect((await listed(tokenId)).last_used).toBeNull();
});

test("other tokens are not touched", async () => {
  const used = await createToken(gw);
  const idle = await createToken(gw);
  expect((await getModels(gw, used.key)).status).toBe(200);
  expect((await listed(used.tokenId)).last_used).not.toBeNull();
  expect((await listed(idle.tokenId)).last_used).toBeNull();
});
