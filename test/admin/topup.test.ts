import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IDEMPOTENCY_KEPT_MS } from "../../src/accounts/top-up.ts";
import { adminCreateUser } from "../helpers/common.ts";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { call, createUser, expectError, expectIso, expectMoney, userWithKey } from "./_helpers.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

async function balanceOf(userId: string): Promise<number> {
  const response = await gw.admin("GET", `/v1/admin/users/${userId}`);
  expect(response.status).toBe(200);
  return response.body.balance;
}

function rawTopUp(text: string, headers: Record<string, string> = {}) {
  return call(gw, "POST", "/v1/admin/topup", { headers: { ...bearer(gw.managementKey), ...headers }, body: text });
}

describe("crediting", () => {
  test("returns the spec 2.12 top-up result", async () => {
    const user = await createUser(gw);
    const response = await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 10.5 });
    expect(response.status).toBe(200);
    const r = response.body;
    expect(r.success).toBe(true);
    expect(typeof r.transaction_id).toBe("string");
    expect(r.transaction_id.length).toBeGreaterThan(0);
    expect(r.user_id).toBe(user.id);
    expectMoney(r.amount);
    expectMoney(r.new_balance);
    expect(r.amount).toBe(10.5);
    expect(r.new_balance).toBe(10.5);
    expectIso(r.timestamp);
    expect(Math.abs(Date.parse(r.timestamp) - Date.now())).toBeLessThan(60_000);
  });

  test("credits the balance, seen by GET /v1/admin/users/:id and by GET /v1/balance with the user's key", async () => {
    const { user, key } = await userWithKey(gw, 2);
    const response = await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 7.25, payment_method: "balance" });
    expect(response.status).toBe(200);
    expect(response.body.new_balance).toBe(9.25);
    expect(await balanceOf(user.id)).toBe(9.25);
    const balance = await call(gw, "GET", "/v1/balance", { headers: bearer(key) });
    expect(balance.status).toBe(200);
    expect(balance.body.balance).toBe(9.25);
    expect(balance.body.currency).toBe("USD");
  });

  test("successive top-ups add up exactly (0.1 + 0.2 = 0.3) with distinct transaction ids", async () => {
    const user = await createUser(gw);
    const a = await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 0.1 });
    const b = await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 0.2 });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.new_balance).toBe(0.3);
    expect(a.body.transaction_id).not.toBe(b.body.transaction_id);
    expect(await balanceOf(user.id)).toBe(0.3);
  });

  test("the smallest unit (0.000001) and the cap (100000) are accepted", async () => {
    const user = await createUser(gw);
    expect((await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 0.000001 })).status).toBe(200);
    expect((await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 100000 })).status).toBe(200);
    expect(await balanceOf(user.id)).toBe(100000.000001);
  });

  test("a missing user is a 404 and credits nobody", async () => {
    expectError(await gw.admin("POST", "/v1/admin/topup", { user_id: "usr_nobody", amount: 5 }), 404, "not_found_error");
  });
});

describe("bad amounts are 400 and change nothing", () => {
  let user: any;
  beforeAll(async () => {
    user = await createUser(gw, { balance: 1 });
  });

  const cases: [string, (id: string) => string][] = [
    ["-1", (id) => JSON.stringify({ user_id: id, amount: -1 })],
    ["0", (id) => JSON.stringify({ user_id: id, amount: 0 })],
    ['"100" (a string)', (id) => JSON.stringify({ user_id: id, amount: "100" })],
    ["1e309 (overflows to Infinity)", (id) => `{"user_id":${JSON.stringify(id)},"amount":1e309}`],
    ["1.0000001 (7 decimals)", (id) => JSON.stringify({ user_id: id, amount: 1.0000001 })],
    ['"NaN"', (id) => JSON.stringify({ user_id: id, amount: "NaN" })],
    ["null", (id) => JSON.stringify({ user_id: id, amount: null })],
    ["missing", (id) => JSON.stringify({ user_id: id })],
    ["100001 (over GATEWAY_MAX_TOPUP_USD 100000)", (id) => JSON.stringify({ user_id: id, amount: 100001 })],
    ["1e20", (id) => JSON.stringify({ user_id: id, amount: 1e20 })],
    ["true", (id) => JSON.stringify({ user_id: id, amount: true })],
    ["[5]", (id) => JSON.stringify({ user_id: id, amount: [5] })],
  ];
  for (const [label, body] of cases) {
    test(`amount ${label}`, async () => {
      const response = await rawTopUp(body(user.id));
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: { message: expect.any(String), type: "invalid_request_error", code: 400 } });
      expect(await balanceOf(user.id)).toBe(1);
    });
  }

  test("an amount too large says so, however large (it used to read as too many decimals past 9e9 USD)", async () => {
    for (const amount of ["100001", "1e20", "1e21", "9007199254740993", "1e300"]) {
      const response = await rawTopUp(`{"user_id":${JSON.stringify(user.id)},"amount":${amount}}`);
      expect({ amount, message: response.body.error?.message }).toEqual({ amount, message: "Invalid 'amount': must be at most 100000 USD" });
    }
    const balance = await gw.admin("POST", "/v1/admin/users", { email: `big-${crypto.randomUUID()}@example.test`, balance: 1e300 });
    expect(balance.body.error.message).toBe("Invalid 'balance': must be at most 100000 USD");
    const price = await gw.admin("POST", "/v1/admin/prices", { model: "too-dear", input_per_million: 1e21 });
    expect(price.body.error.message).toBe("Invalid 'input_per_million': must be at most 1000000 USD");
    expect(await balanceOf(user.id)).toBe(1);
  });

  test("missing user_id, malformed JSON and an empty body are 400", async () => {
    expectError(await rawTopUp(JSON.stringify({ amount: 5 })), 400, "invalid_request_error");
    expectError(await rawTopUp(`{"user_id":"${user.id}","amount":`), 400, "invalid_request_error");
    expectError(await rawTopUp(""), 400, "invalid_request_error");
    expect(await balanceOf(user.id)).toBe(1);
  });
});

describe("Idempotency-Key", () => {
  test("same key and body twice: same transaction_id, credited once", async () => {
    const user = await createUser(gw);
    const key = crypto.randomUUID();
    const body = { user_id: user.id, amount: 4 };
    const first = await gw.admin("POST", "/v1/admin/topup", body, { "idempotency-key": key });
    const second = await gw.admin("POST", "/v1/admin/topup", body, { "idempotency-key": key });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.transaction_id).toBe(first.body.transaction_id);
    expect(second.body).toEqual(first.body);
    expect(await balanceOf(user.id)).toBe(4);
  });

  test("without a key, the same body twice credits twice", async () => {
    const user = await createUser(gw);
    const body = { user_id: user.id, amount: 4 };
    const first = await gw.admin("POST", "/v1/admin/topup", body);
    const second = await gw.admin("POST", "/v1/admin/topup", body);
    expect(first.body.transaction_id).not.toBe(second.body.transaction_id);
    expect(await balanceOf(user.id)).toBe(8);
  });

  test("same key with a different body is a 409 and credits nothing more", async () => {
    const user = await createUser(gw);
    const key = crypto.randomUUID();
    expect((await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 3 }, { "idempotency-key": key })).status).toBe(200);
    expectError(await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 30 }, { "idempotency-key": key }), 409, "conflict_error");
    const other = await createUser(gw);
    expectError(await gw.admin("POST", "/v1/admin/topup", { user_id: other.id, amount: 3 }, { "idempotency-key": key }), 409, "conflict_error");
    expect(await balanceOf(user.id)).toBe(3);
    expect(await balanceOf(other.id)).toBe(0);
  });

  test("50 concurrent top-ups with one key: all 200, one transaction_id, credited exactly once", async () => {
    const user = await createUser(gw);
    const key = crypto.randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 2.5 }, { "idempotency-key": key })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(responses.map((r) => r.body.transaction_id)).size).toBe(1);
    expect(new Set(responses.map((r) => r.body.new_balance))).toEqual(new Set([2.5]));
    expect(await balanceOf(user.id)).toBe(2.5);
  });

  test("different keys each credit", async () => {
    const user = await createUser(gw);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 1 }, { "idempotency-key": crypto.randomUUID() })),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(responses.map((r) => r.body.transaction_id)).size).toBe(10);
    expect(await balanceOf(user.id)).toBe(10);
  });

  test("a refused top-up does not consume its key", async () => {
    const user = await createUser(gw);
    const key = crypto.randomUUID();
    expect((await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: -1 }, { "idempotency-key": key })).status).toBe(400);
    const ok = await gw.admin("POST", "/v1/admin/topup", { user_id: user.id, amount: 1 }, { "idempotency-key": key });
    expect(ok.status).toBe(200);
    expect(await balanceOf(user.id)).toBe(1);
  });
});

describe("Idempotency-Key expiry", () => {
  test("a key is remembered for IDEMPOTENCY_KEPT_MS; after it the key is a new top-up and the old record is gone", async () => {
    let clock = Date.parse("2026-03-01T00:00:00Z");
    const timed = await startTestGateway({ now: () => clock });
    try {
      const user = await adminCreateUser(timed, { email: "expiry@example.com" });
      const topUp = (key: string, amount = 2) => timed.admin("POST", "/v1/admin/topup", { user_id: user.id, amount }, { "idempotency-key": key });
      const records = () => timed.database.db.selectFrom("idempotency_records").select("key").orderBy("key").execute();
      const first = await topUp("weekly");
      clock += IDEMPOTENCY_KEPT_MS - 1;
      const retried = await topUp("weekly");
      expect(retried.body).toEqual(first.body);
      clock += 1;
      const anew = await topUp("weekly");
      expect(anew.status).toBe(200);
      expect(anew.body.transaction_id).not.toBe(first.body.transaction_id);
      expect(anew.body.new_balance).toBe(4);
      clock += IDEMPOTENCY_KEPT_MS;
      expect((await topUp("other", 1)).status).toBe(200);
      // Any top-up sweeps what has expired, not only a retry of the same key.
      expect(await records()).toEqual([{ key: "other" }]);
    } finally {
      await timed.close();
    }
  });
});

describe("failing closed", () => {
  test("with the database unavailable a top-up is a 503 and credits nothing", async () => {
    const other = await startTestGateway();
    const user = await other.admin("POST", "/v1/admin/users", { email: "closed@example.com", balance: 1 });
    const path = `${other.dir}/gateway.db`;
    await other.database.close();
    const response = await other.admin("POST", "/v1/admin/topup", { user_id: user.body.id, amount: 5 });
    expect(response.status).toBe(503);
    expect(response.body.error.type).toBe("unavailable");
    const { Database } = await import("bun:sqlite");
    const check = new Database(path, { readonly: true });
    expect(check.query("select balance_micros from users where id = ?").get(user.body.id)).toEqual({ balance_micros: 1_000_000 });
    check.close();
    await other.close().catch(() => {});
  });
});
