/**
 * README "Keys" / DESIGN 5: a management key on a model endpoint, an API key on
 * /v1/admin/*, or a key without the endpoint's permission is a 403 permission_error;
 * a key limited to some models does not see or reach the others (404).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { chatBody, createToken, expectError, getModels, postChat } from "./support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

describe("management key on model endpoints", () => {
  test("GET /v1/models with the management key is 403", async () => {
    await expectError(await getModels(gw, gw.managementKey), 403, "permission_error");
  });

  test("POST /v1/chat/completions with the management key is 403", async () => {
    await expectError(await postChat(gw, gw.managementKey), 403, "permission_error");
  });

  test("a management key created through the admin API is also 403 on model endpoints and works on admin", async () => {
    const { key } = await createToken(gw, { role: "management", name: "ops" });
    expect(key.startsWith("mk-gw-")).toBe(true);
    await expectError(await getModels(gw, key), 403, "permission_error");
    await expectError(await postChat(gw, key), 403, "permission_error");
    const settings = await gw.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${key}` } });
    expect(settings.status).toBe(200);
  });
});

describe("API key on admin endpoints", () => {
  test("GET /v1/admin/settings with an API key is 403", async () => {
    const { key } = await createToken(gw);
    expect(key.startsWith("sk-gw-")).toBe(true);
    await expectError(await gw.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${key}` } }), 403, "permission_error");
  });

  test("the demo key (all permissions) is 403 on admin reads and writes", async () => {
    const headers = { authorization: `Bearer ${gw.demoKey}`, "content-type": "application/json" };
    await expectError(await gw.fetch("/v1/admin/settings", { headers }), 403, "permission_error");
    await expectError(await gw.fetch("/v1/admin/tokens", { headers }), 403, "permission_error");
    await expectError(
      await gw.fetch("/v1/admin/users", { method: "POST", headers, body: JSON.stringify({ email: "intruder@example.com" }) }),
      403,
      "permission_error",
    );
    // And nothing was created.
    const users = await gw.admin("GET", "/v1/admin/users?limit=100");
    expect(users.body.users.some((u: { email: string }) => u.email === "intruder@example.com")).toBe(false);
  });
});

describe("token permissions", () => {
  test("a token without 'chat' is 403 on POST /v1/chat/completions", async () => {
    const { key } = await createToken(gw, { permissions: ["embeddings"] });
    const message = await expectError(await postChat(gw, key), 403, "permission_error");
    expect(message).toContain("chat");
  });

  test("a token with an empty permission list is 403 on chat, but GET /v1/models needs only a valid key", async () => {
    const { key } = await createToken(gw, { permissions: [] });
    await expectError(await postChat(gw, key), 403, "permission_error");
    expect((await getModels(gw, key)).status).toBe(200);
  });

  test("granting 'chat' by PATCH lifts the 403", async () => {
    const { key, tokenId } = await createToken(gw, { permissions: ["images"] });
    await expectError(await postChat(gw, key), 403, "permission_error");
    const patched = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { permissions: ["chat"] });
    expect(patched.status).toBe(200);
    expect((await postChat(gw, key)).status).toBe(200);
  });
});

describe("token limited to models", () => {
  let key: string;
  beforeAll(async () => {
    key = (await createToken(gw, { models: ["demo-chat-mini"] })).key;
  });

  test("chat with a model outside the list is 404 not_found_error", async () => {
    await expectError(await postChat(gw, key, chatBody({ model: "demo-chat" })), 404, "not_found_error");
  });

  test("chat with the listed model works", async () => {
    const response = await postChat(gw, key, chatBody({ model: "demo-chat-mini" }));
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("chat.completion");
  });

  test("GET /v1/models lists only demo-chat-mini", async () => {
    const response = await getModels(gw, key);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["demo-chat-mini"]);
  });

  test("an unrestricted key sees both demo models (the restriction is per key)", async () => {
    const { key: open } = await createToken(gw);
    const body = await (await getModels(gw, open)).json();
    const ids = body.data.map((m: { id: string }) => m.id);
    expect(ids).toContain("demo-chat");
    expect(ids).toContain("demo-chat-mini");
  });
});
