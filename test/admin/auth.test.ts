import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { call, createToken, createUser, expectError } from "./_helpers.ts";

let gw: TestGateway;
let adminUserId: string;
beforeAll(async () => {
  gw = await startTestGateway();
  adminUserId = (await createUser(gw)).id;
});
afterAll(() => gw.close());

/** Every admin endpoint, with a body that would be valid for writes. */
const endpoints: [string, string, unknown?][] = [
  ["GET", "/v1/admin/settings"],
  ["PATCH", "/v1/admin/settings", { system_name: "hijacked" }],
  ["GET", "/v1/admin/channels"],
  ["POST", "/v1/admin/channels", { name: "x", type: "mock", models: ["x"] }],
  ["GET", "/v1/admin/users"],
  ["POST", "/v1/admin/users", { email: "intruder@example.test" }],
  ["GET", "/v1/admin/tokens"],
  ["POST", "/v1/admin/topup", { user_id: "usr_x", amount: 1 }],
  ["GET", "/v1/admin/usage"],
  ["GET", "/v1/admin/prices"],
  ["POST", "/v1/admin/prices", { model: "intruder-model", input_per_million: 1 }],
];

function send(method: string, path: string, body: unknown, headers: Record<string, string>) {
  return call(gw, method, path, {
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe("admin endpoints without a key", () => {
  for (const [method, path, body] of endpoints) {
    test(`${method} ${path} -> 401 asking for a management key`, async () => {
      const response = await send(method, path, body, {});
      expectError(response, 401, "authentication_error");
      expect(response.body.error.message).toBe("Missing management key; send 'Authorization: Bearer <MANAGEMENT_API_KEY>'");
    });
  }
});

describe("admin endpoints with a user API key", () => {
  for (const [method, path, body] of endpoints) {
    test(`${method} ${path} -> 403`, async () => {
      expectError(await send(method, path, body, { authorization: `Bearer ${gw.demoKey}` }), 403, "permission_error");
    });
  }
});

test("an unknown key, a malformed Authorization header and an empty Bearer are 401", async () => {
  expectError(await send("GET", "/v1/admin/settings", undefined, bearer("mk-gw-" + "x".repeat(40))), 401, "authentication_error");
  expectError(await send("GET", "/v1/admin/settings", undefined, { authorization: `Basic ${btoa("a:b")}` }), 401, "authentication_error");
  expectError(await send("GET", "/v1/admin/settings", undefined, { authorization: "Bearer " }), 401, "authentication_error");
  expectError(await send("GET", "/v1/admin/settings", undefined, { authorization: gw.managementKey }), 401, "authentication_error");
});

test("writes refused for lack of a management key change nothing", async () => {
  const before = await gw.admin("GET", "/v1/admin/settings");
  await send("PATCH", "/v1/admin/settings", { system_name: "hijacked" }, { authorization: `Bearer ${gw.demoKey}` });
  await send("PATCH", "/v1/admin/settings", { system_name: "hijacked" }, {});
  const users = await gw.admin("GET", "/v1/admin/users?limit=100");
  expect(users.body.users.map((u: any) => u.email)).not.toContain("intruder@example.test");
  const after = await gw.admin("GET", "/v1/admin/settings");
  expect(after.body.system_name).toBe(before.body.system_name);
  expect(after.body.system_name).not.toBe("hijacked");
});

test("a management key created through the API works, and is 401 once revoked", async () => {
  const token = await createToken(gw, adminUserId, { role: "management", name: "ops" });
  expect(token.key.startsWith("mk-gw-")).toBe(true);
  const ok = await send("GET", "/v1/admin/settings", undefined, bearer(token.key));
  expect(ok.status).toBe(200);

  const revoked = await gw.admin("DELETE", `/v1/admin/tokens/${token.id}`);
  expect(revoked.status).toBe(200);
  expect(revoked.body.status).toBe("revoked");
  for (const [method, path, body] of endpoints.slice(0, 3)) {
    expectError(await send(method, path, body, bearer(token.key)), 401, "authentication_error");
  }
});

test("a disabled management key is 401, and works again when re-enabled", async () => {
  const token = await createToken(gw, adminUserId, { role: "management", name: "ops2" });
  expect((await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "disabled" })).status).toBe(200);
  expectError(await send("GET", "/v1/admin/users", undefined, bearer(token.key)), 401, "authentication_error");
  expect((await gw.admin("PATCH", `/v1/admin/tokens/${token.id}`, { status: "active" })).status).toBe(200);
  expect((await send("GET", "/v1/admin/users", undefined, bearer(token.key))).status).toBe(200);
});

test("a management key is refused on model endpoints with 403", async () => {
  expectError(await send("GET", "/v1/models", undefined, bearer(gw.managementKey)), 403, "permission_error");
});

test("an unknown admin path with a management key is a 404 in the error shape", async () => {
  expectError(await gw.admin("GET", "/v1/admin/nothing-here"), 404, "not_found_error");
});
