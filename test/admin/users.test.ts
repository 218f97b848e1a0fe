import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { chat, createToken, createUser, expectError, expectInteger, expectIso, expectMoney, getModels, uniqueEmail } from "./_helpers.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

function expectUserRecord(u: any): void {
  expect(typeof u.id).toBe("string");
  expect(u.id.length).toBeGreaterThan(0);
  expect(typeof u.email).toBe("string");
  expect(typeof u.status).toBe("string");
  expectMoney(u.balance);
  expectMoney(u.total_usage);
  expectIso(u.created_at);
}

describe("create, get, patch", () => {
  test("POST creates a user (201) with the spec 2.12 fields; balance in USD", async () => {
    const email = uniqueEmail("create");
    const created = await gw.admin("POST", "/v1/admin/users", { email, balance: 12.5 });
    expect(created.status).toBe(201);
    expectUserRecord(created.body);
    expect(created.body).toMatchObject({ email, status: "active", balance: 12.5, total_usage: 0 });
    expect(Math.abs(Date.parse(created.body.created_at) - Date.now())).toBeLessThan(60_000);
  });

  test("a user without a balance starts at 0", async () => {
    const user = await createUser(gw);
    expect(user.balance).toBe(0);
  });

  test("GET /v1/admin/users/:id returns the same record", async () => {
    const user = await createUser(gw, { balance: 3.25 });
    const got = await gw.admin("GET", `/v1/admin/users/${user.id}`);
    expect(got.status).toBe(200);
    expectUserRecord(got.body);
    expect(got.body).toMatchObject({ id: user.id, email: user.email, status: "active", balance: 3.25, total_usage: 0, created_at: user.created_at });
  });

  test("GET and PATCH of a missing user are 404", async () => {
    expectError(await gw.admin("GET", "/v1/admin/users/usr_does_not_exist"), 404, "not_found_error");
    expectError(await gw.admin("PATCH", "/v1/admin/users/usr_does_not_exist", { status: "suspended" }), 404, "not_found_error");
  });

  test("a duplicate email is a 409 and creates no second user", async () => {
    const email = uniqueEmail("dup");
    expect((await gw.admin("POST", "/v1/admin/users", { email })).status).toBe(201);
    const before = (await gw.admin("GET", "/v1/admin/users")).body.total;
    expectError(await gw.admin("POST", "/v1/admin/users", { email }), 409, "conflict_error");
    expect((await gw.admin("GET", "/v1/admin/users")).body.total).toBe(before);
  });

  test("an email differing only in letter case is the same address: a 409 on create and on PATCH", async () => {
    const email = uniqueEmail("case");
    const own = await gw.admin("POST", "/v1/admin/users", { email });
    expect(own.status).toBe(201);
    expectError(await gw.admin("POST", "/v1/admin/users", { email: email.toUpperCase() }), 409, "conflict_error");
    const other = await createUser(gw);
    expectError(await gw.admin("PATCH", `/v1/admin/users/${other.id}`, { email: email.toUpperCase() }), 409, "conflict_error");
    expect((await gw.admin("PATCH", `/v1/admin/users/${own.body.id}`, { email: email.toUpperCase() })).status).toBe(200);
  });

  test("PATCH to an email another user has is a 409", async () => {
    const a = await createUser(gw);
    const b = await createUser(gw);
    expectError(await gw.admin("PATCH", `/v1/admin/users/${b.id}`, { email: a.email }), 409, "conflict_error");
    expect((await gw.admin("GET", `/v1/admin/users/${b.id}`)).body.email).toBe(b.email);
  });

  test("PATCH changes the email and returns the user record", async () => {
    const user = await createUser(gw);
    const email = uniqueEmail("renamed");
    const patched = await gw.admin("PATCH", `/v1/admin/users/${user.id}`, { email });
    expect(patched.status).toBe(200);
    expectUserRecord(patched.body);
    expect(patched.body).toMatchObject({ id: user.id, email, created_at: user.created_at });
    expect((await gw.admin("GET", `/v1/admin/users/${user.id}`)).body.email).toBe(email);
  });

  test("PATCH status suspended makes the user's API keys 401; active again restores them", async () => {
    const user = await createUser(gw, { balance: 1 });
    const first = await createToken(gw, user.id, { name: "k1" });
    const second = await createToken(gw, user.id, { name: "k2" });
    expect(await getModels(gw, first.key)).toBe(200);
    expect(await getModels(gw, second.key)).toBe(200);

    const suspended = await gw.admin("PATCH", `/v1/admin/users/${user.id}`, { status: "suspended" });
    expect(suspended.status).toBe(200);
    expect(suspended.body.status).toBe("suspended");
    for (const key of [first.key, second.key]) {
      const response = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } });
      expectError({ status: response.status, body: await response.json() }, 401, "authentication_error");
    }
    const chatResponse = await chat(gw, first.key);
    expectError(chatResponse, 401, "authentication_error");
    // Other users are unaffected.
    expect(await getModels(gw, gw.demoKey)).toBe(200);

    expect((await gw.admin("PATCH", `/v1/admin/users/${user.id}`, { status: "active" })).body.status).toBe("active");
    expect(await getModels(gw, first.key)).toBe(200);
  });

  for (const [label, body] of [
    ["no email", { balance: 1 }],
    ["an invalid email", { email: "not-an-email" }],
    ["a negative balance", { email: "neg@example.test", balance: -5 }],
    ["a string balance", { email: "str@example.test", balance: "5" }],
    ["an unknown status", { email: "status@example.test", status: "banned" }],
  ] as const) {
    test(`POST with ${label} is a 400`, async () => {
      expectError(await gw.admin("POST", "/v1/admin/users", body), 400, "invalid_request_error");
    });
  }

  test("PATCH with an unknown status is a 400 and changes nothing", async () => {
    const user = await createUser(gw);
    expectError(await gw.admin("PATCH", `/v1/admin/users/${user.id}`, { status: "banned" }), 400, "invalid_request_error");
    expect((await gw.admin("GET", `/v1/admin/users/${user.id}`)).body.status).toBe("active");
  });
});

describe("listing and paging", () => {
  let gwp: TestGateway;
  let all: any[];
  const CREATED = 25;
  beforeAll(async () => {
    gwp = await startTestGateway();
    for (let i = 0; i < CREATED; i++) {
      const response = await gwp.admin("POST", "/v1/admin/users", { email: `page-${i}@example.test`, balance: i });
      expect(response.status).toBe(201);
    }
    all = (await gwp.admin("GET", "/v1/admin/users?limit=100")).body.users;
  });
  afterAll(() => gwp.close());

  test("GET returns {users, total, page, limit} with user records", async () => {
    const response = await gwp.admin("GET", "/v1/admin/users");
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.users)).toBe(true);
    expectInteger(response.body.total);
    expectInteger(response.body.page);
    expectInteger(response.body.limit);
    for (const user of response.body.users) expectUserRecord(user);
  });

  test("defaults: page 1, limit 20; total counts every user (admin + demo + created)", async () => {
    const { body } = await gwp.admin("GET", "/v1/admin/users");
    expect(body.page).toBe(1);
    expect(body.limit).toBe(20);
    expect(body.users).toHaveLength(20);
    expect(body.total).toBe(CREATED + 2);
    expect(all).toHaveLength(CREATED + 2);
    for (let i = 0; i < CREATED; i++) expect(all.map((u) => u.email)).toContain(`page-${i}@example.test`);
  });

  test("page 2 returns the next slice; pages do not overlap and cover everyone", async () => {
    const p1 = (await gwp.admin("GET", "/v1/admin/users?page=1")).body;
    const p2 = (await gwp.admin("GET", "/v1/admin/users?page=2")).body;
    expect(p2.page).toBe(2);
    expect(p2.total).toBe(CREATED + 2);
    expect(p2.users).toHaveLength(CREATED + 2 - 20);
    const ids = [...p1.users, ...p2.users].map((u: any) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(all.map((u) => u.id).sort());
  });

  test("page and limit together select the matching slice of the full list", async () => {
    const { body } = await gwp.admin("GET", "/v1/admin/users?page=3&limit=5");
    expect(body.page).toBe(3);
    expect(body.limit).toBe(5);
    expect(body.users.map((u: any) => u.id)).toEqual(all.slice(10, 15).map((u) => u.id));
  });

  test("a page past the end is empty but keeps the total", async () => {
    const { body } = await gwp.admin("GET", "/v1/admin/users?page=50&limit=10");
    expect(body.users).toEqual([]);
    expect(body.total).toBe(CREATED + 2);
  });

  test("limit 100 (the maximum) is accepted", async () => {
    const response = await gwp.admin("GET", "/v1/admin/users?limit=100");
    expect(response.status).toBe(200);
    expect(response.body.limit).toBe(100);
  });

  for (const query of ["page=0", "limit=0", "limit=101", "page=-1", "limit=-5", "limit=abc", "page=abc", "limit=1.5", "page=2.5", "limit=1e2"]) {
    test(`?${query} is a 400`, async () => {
      expectError(await gwp.admin("GET", `/v1/admin/users?${query}`), 400, "invalid_request_error");
    });
  }
});
