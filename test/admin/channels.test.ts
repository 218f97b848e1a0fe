import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError, expectInteger } from "./_helpers.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

/** Upstream secrets the tests store; none may ever come back in full. */
const SECRET_A = "sk-upstream-A-7f3c9e1b2d4a6f8e0c2b4d6f8a0c2e4f";
const SECRET_B = "sk-upstream-B-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d";
const SHORT_SECRET = "abc123xyz9";

function expectChannelRecord(c: any): void {
  expect(typeof c.id).toBe("string");
  expect(c.id.length).toBeGreaterThan(0);
  expect(typeof c.name).toBe("string");
  expect(typeof c.status).toBe("string");
  expect(Array.isArray(c.models)).toBe(true);
  for (const model of c.models) expect(typeof model).toBe("string");
  expectInteger(c.priority);
}

async function listChannels(): Promise<{ text: string; channels: any[] }> {
  const response = await gw.fetch("/v1/admin/channels", { headers: { authorization: `Bearer ${gw.managementKey}` } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, channels: JSON.parse(text).channels };
}

async function adminText(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> {
  const response = await gw.fetch(path, {
    method,
    headers: { authorization: `Bearer ${gw.managementKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

test("GET /v1/admin/channels returns {channels:[...]} with spec 2.12 fields; the demo mock channel is listed", async () => {
  const response = await gw.admin("GET", "/v1/admin/channels");
  expect(response.status).toBe(200);
  expect(Object.keys(response.body)).toContain("channels");
  expect(Array.isArray(response.body.channels)).toBe(true);
  for (const channel of response.body.channels) expectChannelRecord(channel);
  const demo = response.body.channels.find((c: any) => c.models.includes("demo-chat"));
  expect(demo).toBeDefined();
  expect(demo.status).toBe("active");
});

describe("create", () => {
  test("POST creates a channel (201) with the given fields and the api_key masked", async () => {
    const created = await adminText("POST", "/v1/admin/channels", {
      name: "openai primary",
      type: "openai",
      base_url: "http://127.0.0.1:9/v1",
      api_key: SECRET_A,
      models: ["acme-a", "acme-b"],
      priority: 5,
    });
    expect(created.status).toBe(201);
    expectChannelRecord(created.body);
    expect(created.body).toMatchObject({ name: "openai primary", status: "active", models: ["acme-a", "acme-b"], priority: 5 });
    expect(created.text).not.toContain(SECRET_A);

    const { text, channels } = await listChannels();
    expect(text).not.toContain(SECRET_A);
    const listed = channels.find((c) => c.id === created.body.id);
    expect(listed).toMatchObject({ name: "openai primary", models: ["acme-a", "acme-b"], priority: 5, status: "active" });

    const one = await adminText("GET", `/v1/admin/channels/${created.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(listed);
    expect(one.text).not.toContain(SECRET_A);
  });

  test("a password in the base_url is masked wherever the channel is shown", async () => {
    const password = "hunter2-basic-auth-secret";
    const created = await adminText("POST", "/v1/admin/channels", { name: "basic", type: "openai", base_url: `http://bob:${password}@127.0.0.1:9/v1`, models: ["acme-basic"] });
    expect(created.status).toBe(201);
    expect(created.body.base_url).toBe("http://bob:****@127.0.0.1:9/v1");
    expect(created.text).not.toContain(password);
    expect((await listChannels()).text).not.toContain(password);
    expect((await adminText("GET", `/v1/admin/channels/${created.body.id}`)).text).not.toContain(password);
  });

  test("a token in the base_url's user name, with no password, is masked wherever the channel is shown", async () => {
    const token = "tok-in-the-user-name-secret";
    const created = await adminText("POST", "/v1/admin/channels", { name: "token user", type: "openai", base_url: `http://${token}@127.0.0.1:9/v1`, models: ["acme-token-user"] });
    expect(created.status).toBe(201);
    expect(created.body.base_url).toBe("http://****@127.0.0.1:9/v1");
    expect(created.text).not.toContain(token);
    expect((await listChannels()).text).not.toContain(token);
    expect((await adminText("GET", `/v1/admin/channels/${created.body.id}`)).text).not.toContain(token);
  });

  test("a short secret is not returned in full either", async () => {
    const created = await adminText("POST", "/v1/admin/channels", { name: "short", type: "openai", api_key: SHORT_SECRET, models: ["acme-s"] });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(SHORT_SECRET);
    expect((await listChannels()).text).not.toContain(SHORT_SECRET);
  });

  test("ids are distinct and priority defaults to an integer", async () => {
    const a = await gw.admin("POST", "/v1/admin/channels", { name: "m1", type: "mock", models: ["acme-m"] });
    const b = await gw.admin("POST", "/v1/admin/channels", { name: "m2", type: "mock", models: ["acme-m"] });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.id).not.toBe(b.body.id);
    expectInteger(a.body.priority);
  });

  for (const [label, body] of [
    ["no name", { type: "openai", models: ["x"] }],
    ["no models", { name: "n", type: "openai" }],
    ["an unknown type", { name: "n", type: "carrier-pigeon", models: ["x"] }],
    ["a fractional priority", { name: "n", type: "openai", models: ["x"], priority: 1.5 }],
    ["a non-http base_url", { name: "n", type: "openai", models: ["x"], base_url: "ftp://example.test" }],
    ["a base_url with a query", { name: "n", type: "openai", models: ["x"], base_url: "https://example.test/v1?api-version=1" }],
    ["a base_url with a fragment", { name: "n", type: "openai", models: ["x"], base_url: "https://example.test/v1#top" }],
    ["models as a string", { name: "n", type: "openai", models: "x" }],
  ] as const) {
    test(`POST with ${label} is a 400 and creates nothing`, async () => {
      const before = (await listChannels()).channels.length;
      expectError(await gw.admin("POST", "/v1/admin/channels", body), 400, "invalid_request_error");
      expect((await listChannels()).channels.length).toBe(before);
    });
  }

  test("priority is an integer from -1,000,000 to 1,000,000 and weight from 0 to 1,000,000; past them a 400 says so", async () => {
    for (const [field, value] of [["priority", 1e300], ["priority", 2 ** 53 + 2], ["priority", 1_000_001], ["priority", -1_000_001], ["weight", -1], ["weight", 1_000_001]] as const) {
      const response = await gw.admin("POST", "/v1/admin/channels", { name: "n", type: "mock", models: ["x"], [field]: value });
      expectError(response, 400, "invalid_request_error");
      const range = field === "priority" ? "-1000000 to 1000000" : "0 to 1000000";
      expect({ value, message: response.body.error.message }).toEqual({ value, message: `Invalid '${field}': must be an integer from ${range}` });
    }
    for (const priority of [-1_000_000, 1_000_000]) {
      const created = await gw.admin("POST", "/v1/admin/channels", { name: "edge", type: "mock", models: ["x"], priority, weight: 1_000_000 });
      expect(created.body).toMatchObject({ priority, weight: 1_000_000 });
      await gw.admin("DELETE", `/v1/admin/channels/${created.body.id}`);
    }
  });

  test("the error for a bad channel does not echo the secret", async () => {
    const response = await adminText("POST", "/v1/admin/channels", { name: "n", type: "nope", models: ["x"], api_key: SECRET_B });
    expect(response.status).toBe(400);
    expect(response.text).not.toContain(SECRET_B);
  });
});

describe("patch and delete", () => {
  let id: string;
  beforeAll(async () => {
    const created = await gw.admin("POST", "/v1/admin/channels", {
      name: "to change",
      type: "openai",
      base_url: "http://127.0.0.1:9/v1",
      api_key: SECRET_A,
      models: ["acme-c"],
      priority: 1,
    });
    expect(created.status).toBe(201);
    id = created.body.id;
  });

  test("PATCH changes priority, models and the secret; the new secret is never returned", async () => {
    const patched = await adminText("PATCH", `/v1/admin/channels/${id}`, { priority: 9, models: ["acme-c", "acme-d"], api_key: SECRET_B });
    expect(patched.status).toBe(200);
    expectChannelRecord(patched.body);
    expect(patched.body).toMatchObject({ id, name: "to change", priority: 9, models: ["acme-c", "acme-d"] });
    expect(patched.text).not.toContain(SECRET_B);
    expect(patched.text).not.toContain(SECRET_A);

    const { text, channels } = await listChannels();
    expect(text).not.toContain(SECRET_B);
    expect(text).not.toContain(SECRET_A);
    expect(channels.find((c) => c.id === id)).toMatchObject({ priority: 9, models: ["acme-c", "acme-d"] });
  });

  test("PATCH status disabled shows in the list and removes its models from /v1/models", async () => {
    const modelsBefore = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${gw.demoKey}` } }).then((r) => r.json());
    expect(modelsBefore.data.map((m: any) => m.id)).toContain("acme-c");

    const patched = await gw.admin("PATCH", `/v1/admin/channels/${id}`, { status: "disabled" });
    expect(patched.status).toBe(200);
    expect(patched.body.status).toBe("disabled");
    expect((await listChannels()).channels.find((c) => c.id === id).status).toBe("disabled");

    const modelsAfter = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${gw.demoKey}` } }).then((r) => r.json());
    expect(modelsAfter.data.map((m: any) => m.id)).not.toContain("acme-c");

    expect((await gw.admin("PATCH", `/v1/admin/channels/${id}`, { status: "active" })).body.status).toBe("active");
  });

  test("PATCH with a bad field is a 400 and changes nothing", async () => {
    const before = (await listChannels()).channels.find((c) => c.id === id);
    expectError(await gw.admin("PATCH", `/v1/admin/channels/${id}`, { priority: "high" }), 400, "invalid_request_error");
    expectError(await gw.admin("PATCH", `/v1/admin/channels/${id}`, { status: "cooling" }), 400, "invalid_request_error");
    expect((await listChannels()).channels.find((c) => c.id === id)).toEqual(before);
  });

  test("GET, PATCH and DELETE of an unknown channel are 404", async () => {
    expectError(await gw.admin("GET", "/v1/admin/channels/ch_missing"), 404, "not_found_error");
    expectError(await gw.admin("PATCH", "/v1/admin/channels/ch_missing", { priority: 1 }), 404, "not_found_error");
    expectError(await gw.admin("DELETE", "/v1/admin/channels/ch_missing"), 404, "not_found_error");
  });

  test("DELETE removes the channel from the list, without returning the secret", async () => {
    const deleted = await adminText("DELETE", `/v1/admin/channels/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(id);
    expect(deleted.text).not.toContain(SECRET_A);
    expect(deleted.text).not.toContain(SECRET_B);
    expect((await listChannels()).channels.some((c) => c.id === id)).toBe(false);
    expectError(await gw.admin("DELETE", `/v1/admin/channels/${id}`), 404, "not_found_error");
  });
});
