/**
 * features.maintenance_mode (spec 2.12, PATCH /v1/admin/settings): while it is on, every model
 * endpoint answers a usable key 503 with Retry-After before it is rate limited or held for, and
 * without calling an upstream or writing a usage row; a missing, invalid or expired key is
 * still a 401. The admin API, /health and /ready keep answering, so the operator can switch it
 * off again.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { createChannel, postJson, postUpload, priceModel, speechWav, startOpenAiMediaUpstream, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { expectError, unknownApiKey } from "../auth/support.ts";

const CHAT_MODEL = "mm-chat";
let gw: TestGateway;
let chatUpstream: OpenAiUpstream;
let mediaUpstream: MediaUpstream;

beforeAll(async () => {
  chatUpstream = await startOpenAiUpstream();
  mediaUpstream = startOpenAiMediaUpstream();
  gw = await startTestGateway();
  await createChannel(gw, { name: "chat", type: "openai", base_url: chatUpstream.url, api_key: "key-chat", models: [CHAT_MODEL] });
  await priceModel(gw, "mm-embed", "embeddings");
  await priceModel(gw, "mm-rerank", "rerank");
  await priceModel(gw, "mm-image", "images");
  await priceModel(gw, "mm-speech", "speech");
  await priceModel(gw, "mm-whisper", "transcriptions");
  const media = ["mm-embed", "mm-rerank", "mm-image", "mm-speech", "mm-whisper"];
  await createChannel(gw, { name: "media", type: "openai", base_url: mediaUpstream.url, api_key: "key-media", models: media });
});
afterAll(async () => {
  await gw.close();
  await chatUpstream.close();
  await mediaUpstream.close();
});
beforeEach(async () => {
  await setMaintenance(gw, false);
  chatUpstream.reset();
  mediaUpstream.reset();
});

async function setMaintenance(target: TestGateway, on: boolean): Promise<void> {
  const patched = await target.admin("PATCH", "/v1/admin/settings", { features: { maintenance_mode: on } });
  expect(patched.status).toBe(200);
  expect(patched.body.features.maintenance_mode).toBe(on);
}

const chatMessages = [{ role: "user", content: "Hello" }];
const geminiContents = { contents: [{ role: "user", parts: [{ text: "Hello" }] }] };
const wav = speechWav("maintenance");

/** One request to each model endpoint with `key`; each names its endpoint for the failure message. */
function everyModelEndpoint(target: TestGateway, key: string): [string, Promise<Response>][] {
  const get = (path: string) => target.fetch(path, { headers: bearer(key) });
  const post = (path: string, body: unknown) => postJson(target, key, path, body);
  const upload = (path: string) => postUpload(target, key, path, { bytes: wav, name: "m.wav" }, { model: "mm-whisper" });
  return [
    ["chat completions", post("/v1/chat/completions", { model: CHAT_MODEL, messages: chatMessages })],
    ["chat completions, streamed", post("/v1/chat/completions", { model: CHAT_MODEL, messages: chatMessages, stream: true })],
    ["messages", post("/v1/messages", { model: CHAT_MODEL, max_tokens: 50, messages: chatMessages })],
    ["messages count_tokens", post("/v1/messages/count_tokens", { model: CHAT_MODEL, messages: chatMessages })],
    ["generateContent", post(`/v1beta/models/${CHAT_MODEL}:generateContent`, geminiContents)],
    ["streamGenerateContent", post(`/v1beta/models/${CHAT_MODEL}:streamGenerateContent?alt=sse`, geminiContents)],
    ["countTokens", post(`/v1beta/models/${CHAT_MODEL}:countTokens`, geminiContents)],
    ["embeddings", post("/v1/embeddings", { model: "mm-embed", input: "hello" })],
    ["rerank", post("/v1/rerank", { model: "mm-rerank", query: "cats", documents: ["cats sleep", "dogs bark"] })],
    ["images", post("/v1/images/generations", { model: "mm-image", prompt: "a cat" })],
    ["speech", post("/v1/audio/speech", { model: "mm-speech", input: "Hello", response_format: "wav" })],
    ["transcriptions", upload("/v1/audio/transcriptions")],
    ["translations", upload("/v1/audio/translations")],
    ["models", get("/v1/models")],
    ["one model", get(`/v1/models/${CHAT_MODEL}`)],
    ["gemini models", get("/v1beta/models")],
    ["balance", get("/v1/balance")],
  ];
}

async function usageRowCount(): Promise<number> {
  await gw.services.usage.flush(true);
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=1");
  expect(listed.status).toBe(200);
  return listed.body.total;
}

async function expectMaintenance(label: string, response: Response): Promise<void> {
  expect({ label, retryAfter: response.headers.get("retry-after") }).toEqual({ label, retryAfter: "60" });
  const message = await expectError(response, 503, "unavailable");
  expect(message).toBe("The gateway is down for maintenance; try again later");
}

test("every model endpoint answers 503 with Retry-After, calls no upstream and writes no usage row", async () => {
  const rowsBefore = await usageRowCount();
  await setMaintenance(gw, true);
  for (const [label, response] of everyModelEndpoint(gw, gw.demoKey)) await expectMaintenance(label, await response);
  expect(chatUpstream.requests).toHaveLength(0);
  expect(mediaUpstream.requests).toHaveLength(0);
  expect(await usageRowCount()).toBe(rowsBefore);
});

test("a missing, invalid or expired key is still the 401 of spec 5.4; a usable key gets the 503", async () => {
  const user = await gw.admin("POST", "/v1/admin/users", { email: `${crypto.randomUUID()}@example.com`, balance: 5 });
  const expired = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "expired" });
  expect((await gw.admin("PATCH", `/v1/admin/tokens/${expired.body.id}`, { expires_at: new Date(Date.now() - 60_000).toISOString() })).status).toBe(200);
  await setMaintenance(gw, true);
  const chat = (key: string) => postJson(gw, key, "/v1/chat/completions", { model: CHAT_MODEL, messages: chatMessages });
  await expectError(await gw.fetch("/v1/chat/completions", { method: "POST", body: "{}" }), 401, "authentication_error");
  await expectError(await gw.fetch("/v1/models"), 401, "authentication_error");
  await expectError(await chat(unknownApiKey()), 401, "authentication_error");
  await expectError(await chat(expired.body.key), 401, "authentication_error");
  await expectMaintenance("usable key", await chat(gw.demoKey));
});

test("refused requests do not use up the key's rate limit", async () => {
  const user = await gw.admin("POST", "/v1/admin/users", { email: `${crypto.randomUUID()}@example.com`, balance: 5 });
  const token = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "one a minute", requests_per_minute: 1 });
  await setMaintenance(gw, true);
  for (let i = 0; i < 3; i++) await expectMaintenance(`refused ${i}`, await postJson(gw, token.body.key, "/v1/chat/completions", { model: CHAT_MODEL, messages: chatMessages }));
  await setMaintenance(gw, false);
  expect((await postJson(gw, token.body.key, "/v1/chat/completions", { model: CHAT_MODEL, messages: chatMessages })).status).toBe(200);
});

test("the admin API, /health and /ready keep answering, and switching it off serves again", async () => {
  await setMaintenance(gw, true);
  expect((await gw.admin("GET", "/v1/admin/settings")).body.features.maintenance_mode).toBe(true);
  expect((await gw.admin("GET", "/v1/admin/channels")).status).toBe(200);
  expect((await gw.fetch("/health")).status).toBe(200);
  expect((await gw.fetch("/ready")).status).toBe(200);
  await setMaintenance(gw, false);
  for (const [label, response] of everyModelEndpoint(gw, gw.demoKey)) {
    const served = await response;
    expect({ label, status: served.status }).toEqual({ label, status: 200 });
    await served.arrayBuffer();
  }
});

test("an instance sharing the database follows the switch within the cache poll", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-maintenance-"));
  const first = await startTestGateway({ dir });
  const second = await startTestGateway({ dir });
  second.services.changes.start(50);
  const status = () => second.fetch("/v1/models", { headers: bearer(first.demoKey) }).then((r) => r.status);
  /** Polls `second` for up to 1 s until it answers `expected`. */
  const settlesOn = async (expected: number) => {
    let seen = await status();
    for (const deadline = Date.now() + 1_000; seen !== expected && Date.now() < deadline; seen = await status()) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return seen;
  };
  try {
    expect(await status()).toBe(200);
    await setMaintenance(first, true);
    expect(await settlesOn(503)).toBe(503);
    await setMaintenance(first, false);
    expect(await settlesOn(200)).toBe(200);
  } finally {
    await second.close({ keepFiles: true });
    await first.close({ keepFiles: true });
    rmSync(dir, { recursive: true, force: true });
  }
});
