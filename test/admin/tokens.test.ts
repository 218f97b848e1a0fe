import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { call, chat, createToken, createUser, expectError, expectIso, getModels, sha256Hex, stringValues } from "./_helpers.ts";

let gw: TestGateway;
let user: any;
beforeAll(async () => {
  gw = await startTestGateway();
  user = await createUser(gw, { balance: 5 });
});
afterAll(() => gw.close());

function expectTokenRecord(t: any): void {
  expect(typeof t.id).toBe("string");
  expect(t.id.length).toBeGreaterThan(0);
  expect(typeof t.name).toBe("string");
  expect(typeof t.user_id).toBe("string");
  expect(Array.isArray(t.permissions)).toBe(true);
  for (const p of t.permissions) expect(typeof p).toBe("string");
  expect(typeof t.status).toBe("string");
  expectIso(t.created_at);
  expect("last_used" in t).toBe(true);
  if (t.last_used !== null) expectIso(t.last_used);
}

async function listTokens(): Promise<{ text: string; tokens: any[] }> {
  const response = await gw.fetch("/v1/admin/tokens", { headers: { authorization: `Bearer ${gw.managementKey}` } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, tokens: JSON.parse(text).tokens };
}

/** Every key the tests were shown; none may appear in any later response. */
const shownKeys: string[] = [];
async function newToken(fields: Record<string, unknown> = {}, userId = user.id): Promise<any> {
  const token = await createToken(gw, userId, fields);
  shownKeys.push(token.key);
  return token;
}

describe("create", () => {
  test("POST creates a user-role token (201) with the spec fields and a one-time sk-gw- key", async () => {
    const response = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.id, name: "laptop" });
    expect(response.status).toBe(201);
    shownKeys.push(response.body.key);
    expectTokenRecord(response.body);
    expect(response.body).toMatchObject({ name: "laptop", user_id: user.id, status: "active", last_used: null });
    expect(response.body.key).toMatch(/^sk-gw-[A-Za-z0-9]{40}$/);
    expect(response.body.permissions).toContain("chat");
    expect(await getModels(gw, response.body.key)).toBe(200);
  });

  test("a management-role token gets an mk-gw- key that works on /v1/admin/settings", async () => {
    const token = await newToken({ role: "management", name: "ops" });
    expect(token.key).toMatch(/^mk-gw-[A-Za-z0-9]{40}$/);
    const settings = await call(gw, "GET", "/v1/admin/settings", { headers: bearer(token.key) });
    expect(settings.status).toBe(200);
    expect(typeof settings.body.system_name).toBe("string");
  });

  test("the role is read whatever its case ('Management' as spec 5.3 writes it, 'USER'), and stored and shown lower-case", async () => {
    const management = await newToken({ role: "Management", name: "ops" });
    expect(management.role).toBe("management");
    expect(management.key).toMatch(/^mk-gw-/);
    expect((await call(gw, "GET", "/v1/admin/settings", { headers: bearer(management.key) })).status).toBe(200);
    const user = await newToken({ role: "USER", name: "app" });
    expect(user.role).toBe("user");
    expect(await getModels(gw, user.key)).toBe(200);
    const listed = (await listTokens()).tokens.filter((t) => t.id === management.id || t.id === user.id);
    expect(listed.map((t) => t.role).sort()).toEqual(["management", "user"]);
  });

  test("each created key is distinct", async () => {
    const a = await newToken();
    const b = await newToken();
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  test("explicit permissions are kept", async () => {
    const token = await newToken({ permissions: ["embeddings", "rerank"] });
    expect([...token.permissions].sort()).toEqual(["embeddings", "rerank"]);
  });

  test("a token for a missing user is a 404", async () => {
    expectError(await gw.admin("POST", "/v1/admin/tokens", { user_id: "usr_nobody", name: "x" }), 404, "not_found_error");
  });

  for (const [label, body] of [
    ["no name", { permissions: ["chat"] }],
    ["an unknown permission", { name: "x", permissions: ["fly"] }],
    ["an unknown role", { name: "x", role: "root" }],
    ["an expiry in the past", { name: "x", expires_at: "2001-01-01T00:00:00Z" }],
    ["an expiry that is not a date", { name: "x", expires_at: "tomorrow" }],
    // ISO 8601 allows a zone of hours only; Date.parse cannot read it, and it once became "never expires".
    ["an expiry with an hours-only zone", { name: "x", expires_at: "2099-12-31T00:00:00+05" }],
    ["an expiry on a day that does not exist", { name: "x", expires_at: "2099-02-30T00:00:00Z" }],
  ] as const) {
    test(`POST with ${label} is a 400`, async () => {
      expectError(await gw.admin("POST", "/v1/admin/tokens", { user_id: user.id, ...body }), 400, "invalid_request_error");
    });
  }
  test("a refused expiry creates no token, and a refused PATCH leaves the expiry as it was", async () => {
    const before = (await listTokens()).tokens.length;
    expectError(await gw.admin("POST", "/v1/admin/tokens", { user_id: user.id, name: "tz", expires_at: "2099-12-31T00:00:00+05" }), 400, "invalid_request_error");
    expect((await listTokens()).tokens.length).toBe(before);
    const token = await newToken({ name: "expiring", expires_at: "2030-01-01T00:00:00Z" });
    const patched = await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { expires_at: "2029-06-01T00:00:00+02" });
    expectError(patched, 400, "invalid_request_error");
    expect((await listTokens()).tokens.find((t) => t.id === token.id).expires_at).toBe("2030-01-01T00:00:00.000Z");
  });
  test("POST without user_id is a 400", async () => {
    expectError(await gw.admin("POST", "/v1/admin/tokens", { name: "x" }), 400, "invalid_request_error");
  });
});

describe("list", () => {
  test("GET returns {tokens:[...]} with the spec 2.12 token fields", async () => {
    await newToken({ name: "listed" });
    const { tokens } = await listTokens();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expectTokenRecord(token);
    expect(tokens.some((t) => t.name === "listed" && t.user_id === user.id)).toBe(true);
  });

  test("no list field contains any plaintext key or key hash", async () => {
    await newToken({ name: "secret-check" });
    await newToken({ name: "secret-check-mk", role: "management" });
    const { text, tokens } = await listTokens();
    expect(shownKeys.length).toBeGreaterThan(3);
    const hashes = await Promise.all([...shownKeys, gw.demoKey, gw.managementKey].map(sha256Hex));
    const values = stringValues(tokens);
    for (const secret of [...shownKeys, gw.demoKey, gw.managementKey, ...hashes]) {
      expect(text.includes(secret)).toBe(false);
      expect(values.some((v) => v.includes(secret))).toBe(false);
    }
    for (const token of tokens) {
      expect(token.key).toBeUndefined();
      expect(token.key_hash).toBeUndefined();
      expect(token.hash).toBeUndefined();
    }
  });

  test("last_used becomes an ISO timestamp once the key is used", async () => {
    const token = await newToken({ name: "used" });
    expect((await listTokens()).tokens.find((t) => t.id === token.id).last_used).toBeNull();
    expect(await getModels(gw, token.key)).toBe(200);
    const used = (await listTokens()).tokens.find((t) => t.id === token.id);
    expectIso(used.last_used);
    expect(Math.abs(Date.parse(used.last_used) - Date.now())).toBeLessThan(60_000);
  });
});

describe("one, and pages", () => {
  test("GET /tokens/:id returns that token's record, never its key; an unknown id is a 404", async () => {
    const token = await newToken({ name: "looked-up" });
    const response = await gw.admin("GET", `/v1/admin/tokens/${token.id}`);
    expect(response.status).toBe(200);
    expectTokenRecord(response.body);
    expect(response.body).toMatchObject({ id: token.id, name: "looked-up", user_id: user.id, status: "active" });
    expect(JSON.stringify(response.body).includes(token.key)).toBe(false);
    expectError(await gw.admin("GET", "/v1/admin/tokens/tok_missing"), 404, "not_found_error");
  });

  test("page and limit page the listing, with the total; without them every token is listed", async () => {
    const pagedUser = await createUser(gw, { balance: 1 });
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await newToken({ name: `paged-${i}` }, pagedUser.id));
    const everything = await gw.admin("GET", `/v1/admin/tokens?user_id=${pagedUser.id}`);
    const listed = everything.body.tokens.map((t: any) => t.id);
    // Tokens made within one millisecond are listed in id order, not necessarily the order made.
    expect([...listed].sort()).toEqual(made.map((t) => t.id).sort());
    expect(everything.body.total).toBeUndefined();
    const pages = [];
    for (const page of [1, 2, 3]) {
      const response = await gw.admin("GET", `/v1/admin/tokens?user_id=${pagedUser.id}&limit=2&page=${page}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ total: 5, page, limit: 2 });
      pages.push(...response.body.tokens.map((t: any) => t.id));
    }
    expect(pages).toEqual(listed);
    const defaults = await gw.admin("GET", `/v1/admin/tokens?user_id=${pagedUser.id}&page=1`);
    expect(defaults.body).toMatchObject({ total: 5, page: 1, limit: 50 });
  });

  test.each(["limit=0", "limit=201", "page=0", "page=x", "limit=-1"])("?%s is a 400", async (query) => {
    expectError(await gw.admin("GET", `/v1/admin/tokens?${query}`), 400, "invalid_request_error");
  });
});

describe("patch", () => {
  test("status disabled makes the key 401; active again restores it", async () => {
    const token = await newToken({ name: "to-disable" });
    expect(await getModels(gw, token.key)).toBe(200);
    const patched = await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "disabled" });
    expect(patched.status).toBe(200);
    expectTokenRecord(patched.body);
    expect(patched.body.status).toBe("disabled");
    expect(patched.body.key).toBeUndefined();
    const refused = await call(gw, "GET", "/v1/models", { headers: bearer(token.key) });
    expectError(refused, 401, "authentication_error");
    expectError(await chat(gw, token.key), 401, "authentication_error");
    expect((await listTokens()).tokens.find((t) => t.id === token.id).status).toBe("disabled");

    expect((await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "active" })).body.status).toBe("active");
    expect(await getModels(gw, token.key)).toBe(200);
  });

  test("removing the chat permission makes chat a 403; other keys unaffected", async () => {
    const token = await newToken({ name: "perm" });
    const first = await chat(gw, token.key);
    expect(first.status).toBe(200);
    const patched = await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { permissions: ["embeddings"] });
    expect(patched.status).toBe(200);
    expect(patched.body.permissions).toEqual(["embeddings"]);
    expectError(await chat(gw, token.key), 403, "permission_error");
    // Listing models needs only a valid key (DESIGN.md section 5).
    expect(await getModels(gw, token.key)).toBe(200);
    expect((await chat(gw, gw.demoKey)).status).toBe(200);
  });

  test("renaming shows in the list", async () => {
    const token = await newToken({ name: "old-name" });
    const patched = await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { name: "new-name" });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe("new-name");
    expect((await listTokens()).tokens.find((t) => t.id === token.id).name).toBe("new-name");
  });

  test("bad patches are 400 and change nothing", async () => {
    const token = await newToken({ name: "bad-patch" });
    expectError(await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "revoked" }), 400, "invalid_request_error");
    expectError(await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { permissions: ["fly"] }), 400, "invalid_request_error");
    expectError(await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { name: "" }), 400, "invalid_request_error");
    const listed = (await listTokens()).tokens.find((t) => t.id === token.id);
    expect(listed).toMatchObject({ name: "bad-patch", status: "active" });
    expect(await getModels(gw, token.key)).toBe(200);
  });

  test("PATCH of a missing token is 404", async () => {
    expectError(await gw.admin("PATCH", "/v1/admin/tokens/tok_missing", { name: "x" }), 404, "not_found_error");
  });
});

describe("revoke", () => {
  test("DELETE revokes: status revoked, the key is 401 afterwards, and it stays listed as revoked", async () => {
    const token = await newToken({ name: "to-revoke" });
    expect(await getModels(gw, token.key)).toBe(200);
    const revoked = await gw.admin("DELETE", `/v1/admin/tokens/${token.id}`);
    expect(revoked.status).toBe(200);
    expectTokenRecord(revoked.body);
    expect(revoked.body).toMatchObject({ id: token.id, status: "revoked" });
    expectError(await call(gw, "GET", "/v1/models", { headers: bearer(token.key) }), 401, "authentication_error");
    expectError(await chat(gw, token.key), 401, "authentication_error");
    expect((await listTokens()).tokens.find((t) => t.id === token.id).status).toBe("revoked");
  });

  test("a revoked token cannot be re-enabled (409) and stays 401", async () => {
    const token = await newToken({ name: "revoked-reenable" });
    expect((await gw.admin("DELETE", `/v1/admin/tokens/${token.id}`)).status).toBe(200);
    expectError(await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "active" }), 409, "conflict_error");
    expect(await getModels(gw, token.key)).toBe(401);
  });

  test("DELETE of a missing token is 404", async () => {
    expectError(await gw.admin("DELETE", "/v1/admin/tokens/tok_missing"), 404, "not_found_error");
  });
});
