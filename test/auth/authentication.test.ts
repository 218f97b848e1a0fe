/**
 * Spec 5 / DESIGN 5 / README "Keys": every way a key can fail is a 401
 * authentication_error in the spec's error shape, and the ways a key is presented.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError, getModels, postChat, sleep, unknownApiKey } from "./support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

/** Asserts the key is accepted now (GET /v1/models 200 listing demo-chat). */
async function expectAccepted(key: string): Promise<void> {
  const response = await getModels(gw, key);
  const text = await response.text();
  expect({ status: response.status, text }).toEqual({ status: 200, text: expect.any(String) });
  expect(JSON.parse(text).data.map((m: { id: string }) => m.id)).toContain("demo-chat");
}

describe("401 authentication_error", () => {
  test("missing key on GET /v1/models and POST /v1/chat/completions", async () => {
    await expectError(await gw.fetch("/v1/models"), 401, "authentication_error");
    await expectError(
      await gw.fetch("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hi" }] }),
      }),
      401,
      "authentication_error",
    );
  });

  test("missing key on an admin endpoint", async () => {
    await expectError(await gw.fetch("/v1/admin/settings"), 401, "authentication_error");
  });

  for (const header of ["Basic x", "Bearer", "Bearer ", "Bearer a b", "Token abc", "bearer"]) {
    test(`malformed Authorization ${JSON.stringify(header)}`, async () => {
      await expectError(await gw.fetch("/v1/models", { headers: { authorization: header } }), 401, "authentication_error");
    });
  }

  test("a malformed Authorization header with a valid key inside is still refused", async () => {
    const { key } = await createToken(gw);
    await expectAccepted(key);
    await expectError(await gw.fetch("/v1/models", { headers: { authorization: `Basic ${key}` } }), 401, "authentication_error");
    await expectError(await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key} extra` } }), 401, "authentication_error");
  });

  test("a malformed Authorization header is rejected, not skipped in favour of x-api-key / ?key=", async () => {
    const { key } = await createToken(gw);
    await expectAccepted(key);
    await expectError(await gw.fetch("/v1/models", { headers: { authorization: "Basic x", "x-api-key": key } }), 401, "authentication_error");
    await expectError(await gw.fetch(`/v1/models?key=${key}`, { headers: { authorization: "Bearer a b" } }), 401, "authentication_error");
  });

  test("unknown key (well-formed, never issued) and garbage key", async () => {
    await expectError(await getModels(gw, unknownApiKey()), 401, "authentication_error");
    await expectError(await getModels(gw, "not-a-key"), 401, "authentication_error");
    await expectError(await getModels(gw, `mk-gw-${"x".repeat(40)}`), 401, "authentication_error");
    await expectError(await postChat(gw, unknownApiKey()), 401, "authentication_error");
  });

  test("disabled token is 401; re-activating restores access", async () => {
    const { key, tokenId } = await createToken(gw);
    await expectAccepted(key); // cached now: the change must clear it

    const disabled = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { status: "disabled" });
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toBe("disabled");
    await expectError(await getModels(gw, key), 401, "authentication_error");
    await expectError(await postChat(gw, key), 401, "authentication_error");

    const active = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { status: "active" });
    expect(active.status).toBe(200);
    expect(active.body.status).toBe("active");
    await expectAccepted(key);
    expect((await postChat(gw, key)).status).toBe(200);
  });

  test("revoked token is 401 and cannot be re-activated", async () => {
    const { key, tokenId } = await createToken(gw);
    await expectAccepted(key);

    const revoked = await gw.admin("DELETE", `/v1/admin/tokens/${tokenId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe("revoked");
    await expectError(await getModels(gw, key), 401, "authentication_error");
    await expectError(await postChat(gw, key), 401, "authentication_error");

    // README: a change to a revoked token is a 409; the key stays refused.
    const reactivate = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { status: "active" });
    expect(reactivate.status).toBe(409);
    expect(reactivate.body.error.type).toBe("conflict_error");
    await expectError(await getModels(gw, key), 401, "authentication_error");
  });

  test("expired token is 401 once its expires_at passed, and is listed as expired", async () => {
    const expiresAt = Date.now() + 1_500;
    const { key, tokenId } = await createToken(gw, { expires_at: new Date(expiresAt).toISOString() });
    await expectAccepted(key); // valid before its time (and cached)

    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    await expectError(await getModels(gw, key), 401, "authentication_error");
    await expectError(await postChat(gw, key), 401, "authentication_error");

    const listed = await gw.admin("GET", "/v1/admin/tokens");
    expect(listed.body.tokens.find((t: { id: string }) => t.id === tokenId)?.status).toBe("expired");
  });

  test("a token whose expires_at is moved into the past by PATCH is 401; moved forward again it works", async () => {
    const { key, tokenId } = await createToken(gw);
    await expectAccepted(key);
    const past = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { expires_at: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(200);
    await expectError(await getModels(gw, key), 401, "authentication_error");
    const future = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.status).toBe(200);
    await expectAccepted(key);
  });

  test("key of a suspended user is 401; un-suspending restores access", async () => {
    const { key, userId } = await createToken(gw);
    await expectAccepted(key);

    const suspended = await gw.admin("PATCH", `/v1/admin/users/${userId}`, { status: "suspended" });
    expect(suspended.status).toBe(200);
    expect(suspended.body.status).toBe("suspended");
    await expectError(await getModels(gw, key), 401, "authentication_error");
    await expectError(await postChat(gw, key), 401, "authentication_error");
    await expectError(await gw.fetch("/v1/balance", { headers: { authorization: `Bearer ${key}` } }), 401, "authentication_error");

    const restored = await gw.admin("PATCH", `/v1/admin/users/${userId}`, { status: "active" });
    expect(restored.status).toBe(200);
    await expectAccepted(key);
    expect((await postChat(gw, key)).status).toBe(200);
  });

  test("suspending a user refuses every one of its keys", async () => {
    const first = await createToken(gw);
    const second = await createToken(gw, { userId: first.userId, name: "second" });
    await expectAccepted(first.key);
    await expectAccepted(second.key);
    expect((await gw.admin("PATCH", `/v1/admin/users/${first.userId}`, { status: "suspended" })).status).toBe(200);
    await expectError(await getModels(gw, first.key), 401, "authentication_error");
    await expectError(await getModels(gw, second.key), 401, "authentication_error");
  });
});

describe("key sources", () => {
  let key: string;
  beforeAll(async () => {
    key = (await createToken(gw)).key;
  });

  test("Authorization: Bearer", async () => {
    const response = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("list");
  });

  test("Authorization scheme is case-insensitive (bearer)", async () => {
    const response = await gw.fetch("/v1/models", { headers: { authorization: `bearer ${key}` } });
    expect(response.status).toBe(200);
  });

  test("x-api-key header", async () => {
    const response = await gw.fetch("/v1/models", { headers: { "x-api-key": key } });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("list");
  });

  test("x-goog-api-key header (the genai SDK's, so /v1/models answers in Gemini's shape)", async () => {
    const response = await gw.fetch("/v1/models", { headers: { "x-goog-api-key": key } });
    expect(response.status).toBe(200);
    expect(Array.isArray((await response.json()).models)).toBe(true);
  });

  test("?key= query parameter", async () => {
    const response = await gw.fetch(`/v1/models?key=${encodeURIComponent(key)}`);
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("list");
  });

  test("each source with an unknown key is 401", async () => {
    const bad = unknownApiKey();
    await expectError(await gw.fetch("/v1/models", { headers: { "x-api-key": bad } }), 401, "authentication_error");
    await expectError(await gw.fetch("/v1/models", { headers: { "x-goog-api-key": bad } }), 401, "authentication_error");
    await expectError(await gw.fetch(`/v1/models?key=${bad}`), 401, "authentication_error");
  });

  test("x-api-key authenticates a chat completion", async () => {
    const response = await gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hello" }] }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("chat.completion");
  });
});
