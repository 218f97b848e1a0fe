import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { createToken, createUser, expectError, unknownApiKey } from "./support.ts";

/**
 * Spec 5 held on every model endpoint, for each way the SDKs send a key: a missing,
 * malformed, unknown, disabled, revoked or expired key and a key of a suspended user are the
 * 401, a management key and a key without the endpoint's permission the 403, each in the
 * caller format's error shape, and none of them reaches an upstream.
 */

const MODEL = "auth-matrix-model";

interface Endpoint {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** The key permission it needs; none for the model lists and the balance. */
  permission?: "chat" | "embeddings" | "rerank" | "images" | "audio";
  body?: () => BodyInit;
  contentType?: string;
}

const json = (body: unknown) => () => JSON.stringify(body);
const chatBody = json({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
const geminiBody = json({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
const upload = () => {
  const form = new FormData();
  form.set("model", MODEL);
  form.set("file", new Blob([new Uint8Array(64)], { type: "audio/wav" }), "a.wav");
  return form;
};

const ENDPOINTS: Endpoint[] = [
  { method: "POST", path: "/v1/chat/completions", permission: "chat", body: chatBody },
  { method: "POST", path: "/v1/responses", permission: "chat", body: json({ model: MODEL, input: "hi" }) },
  { method: "POST", path: "/v1/responses/input_tokens", permission: "chat", body: json({ model: MODEL, input: "hi" }) },
  { method: "GET", path: "/v1/responses/resp_someone", permission: "chat" },
  { method: "DELETE", path: "/v1/responses/resp_someone", permission: "chat" },
  { method: "GET", path: "/v1/responses/resp_someone/input_items", permission: "chat" },
  { method: "POST", path: "/v1/messages", permission: "chat", body: json({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) },
  { method: "POST", path: "/v1/messages/count_tokens", permission: "chat", body: json({ model: MODEL, messages: [{ role: "user", content: "hi" }] }) },
  { method: "POST", path: `/v1beta/models/${MODEL}:generateContent`, permission: "chat", body: geminiBody },
  { method: "POST", path: `/v1beta/models/${MODEL}:streamGenerateContent`, permission: "chat", body: geminiBody },
  { method: "POST", path: `/v1beta/models/${MODEL}:countTokens`, permission: "chat", body: geminiBody },
  { method: "POST", path: `/v1/models/${MODEL}:generateContent`, permission: "chat", body: geminiBody },
  { method: "POST", path: `/v1alpha/models/${MODEL}:generateContent`, permission: "chat", body: geminiBody },
  { method: "POST", path: `/v1beta/models/${MODEL}:embedContent`, permission: "embeddings", body: json({ content: { parts: [{ text: "hi" }] } }) },
  { method: "POST", path: `/v1beta/models/${MODEL}:batchEmbedContents`, permission: "embeddings", body: json({ requests: [{ model: `models/${MODEL}`, content: { parts: [{ text: "hi" }] } }] }) },
  { method: "POST", path: "/v1/embeddings", permission: "embeddings", body: json({ model: MODEL, input: "hi" }) },
  { method: "POST", path: "/v1/rerank", permission: "rerank", body: json({ model: MODEL, query: "q", documents: ["a"] }) },
  { method: "POST", path: "/v1/images/generations", permission: "images", body: json({ model: MODEL, prompt: "a cat" }) },
  { method: "POST", path: "/v1/audio/speech", permission: "audio", body: json({ model: MODEL, input: "hi", voice: "alloy" }) },
  { method: "POST", path: "/v1/audio/transcriptions", permission: "audio", body: upload },
  { method: "POST", path: "/v1/audio/translations", permission: "audio", body: upload },
  { method: "GET", path: "/v1/models" },
  { method: "GET", path: `/v1/models/${MODEL}` },
  { method: "GET", path: "/v1beta/models" },
  { method: "GET", path: `/v1beta/models/${MODEL}` },
  { method: "GET", path: "/v1alpha/models" },
  { method: "GET", path: "/v1/balance" },
];

/** The four ways the SDKs send a key. */
const KEY_FORMS: Record<string, (key: string) => { headers: Record<string, string>; query: string }> = {
  "Authorization: Bearer": (key) => ({ headers: { authorization: `Bearer ${key}` }, query: "" }),
  "x-api-key": (key) => ({ headers: { "x-api-key": key }, query: "" }),
  "x-goog-api-key": (key) => ({ headers: { "x-goog-api-key": key }, query: "" }),
  "?key=": (key) => ({ headers: {}, query: `key=${encodeURIComponent(key)}` }),
};

let gw: TestGateway;
let upstream: OpenAiUpstream;
/** Each refused kind of key, by what makes it refused. */
const refusedKeys: Record<string, string> = {};
let allPermissions: string;
/** A key of every permission but one, by that one. */
const lacking: Record<string, string> = {};

beforeAll(async () => {
  gw = await startTestGateway();
  upstream = await startOpenAiUpstream();
  const channel = await gw.admin("POST", "/v1/admin/channels", { name: "matrix", type: "openai", base_url: upstream.url, api_key: "sk-matrix-upstream", models: [MODEL] });
  expect(channel.status).toBe(201);

  refusedKeys.unknown = unknownApiKey();
  const disabled = await createToken(gw);
  await gw.admin("PATCH", `/v1/admin/tokens/${disabled.tokenId}`, { status: "disabled" });
  refusedKeys.disabled = disabled.key;
  const revoked = await createToken(gw);
  await gw.admin("DELETE", `/v1/admin/tokens/${revoked.tokenId}`);
  refusedKeys.revoked = revoked.key;
  const expired = await createToken(gw);
  expect((await gw.admin("PATCH", `/v1/admin/tokens/${expired.tokenId}`, { expires_at: new Date(Date.now() - 60_000).toISOString() })).status).toBe(200);
  refusedKeys.expired = expired.key;
  const suspendedUser = await createUser(gw);
  refusedKeys["of a suspended user"] = (await createToken(gw, { userId: suspendedUser })).key;
  expect((await gw.admin("PATCH", `/v1/admin/users/${suspendedUser}`, { status: "suspended" })).status).toBe(200);

  allPermissions = (await createToken(gw)).key;
  const permissions = ["chat", "embeddings", "rerank", "images", "audio"];
  for (const permission of permissions) lacking[permission] = (await createToken(gw, { permissions: permissions.filter((p) => p !== permission) })).key;
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

function call(endpoint: Endpoint, headers: Record<string, string>, query = ""): Promise<Response> {
  const body = endpoint.body?.();
  const contentType: Record<string, string> = typeof body === "string" ? { "content-type": "application/json" } : {};
  return gw.fetch(query ? `${endpoint.path}?${query}` : endpoint.path, { method: endpoint.method, headers: { ...contentType, ...headers }, body });
}

describe.each(ENDPOINTS.map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint] as const))("%s", (_name, endpoint) => {
  test("no key, or a malformed Authorization header, is the 401", async () => {
    await expectError(await call(endpoint, {}), 401, "authentication_error");
    for (const authorization of ["Basic c2stZ3c6", "Bearer", `Bearer ${allPermissions} extra`, `Token ${allPermissions}`]) {
      await expectError(await call(endpoint, { authorization }), 401, "authentication_error");
    }
    // A malformed Authorization header is not passed over for another form that holds a good key.
    await expectError(await call(endpoint, { authorization: "Basic c2stZ3c6", "x-api-key": allPermissions }, `key=${allPermissions}`), 401, "authentication_error");
  });

  for (const [form, send] of Object.entries(KEY_FORMS)) {
    test(`${form}: unknown, disabled, revoked, expired and suspended keys are the 401; a management key and a key without the permission the 403`, async () => {
      for (const [why, key] of Object.entries(refusedKeys)) {
        const { headers, query } = send(key);
        const message = await expectError(await call(endpoint, headers, query), 401, "authentication_error");
        expect({ why, message }).toEqual({ why, message: expect.not.stringContaining(key) });
      }
      const management = send(gw.managementKey);
      await expectError(await call(endpoint, management.headers, management.query), 403, "permission_error");
      if (endpoint.permission) {
        const without = send(lacking[endpoint.permission]!);
        const message = await expectError(await call(endpoint, without.headers, without.query), 403, "permission_error");
        expect(message).toContain(endpoint.permission);
      }
    });
  }
});

test("no refused request reached the upstream, and a usable key does", async () => {
  expect(upstream.requests).toHaveLength(0);
  const served = await call(ENDPOINTS[0]!, { authorization: `Bearer ${allPermissions}` });
  expect(served.status).toBe(200);
  expect(upstream.requests).toHaveLength(1);
});
