/**
 * GATEWAY_LOG_REQUESTS=1: one JSON line per request through the gateway's logger, written when
 * the response head is ready, with ids and numbers only; nothing at all when it is off.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJsonLogger } from "../../src/lib/logger.ts";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { createChannel } from "../helpers/openai-media-upstream.ts";
import { createToken, type CreatedToken } from "../auth/support.ts";

const MODEL = "log-chat";
const CHANNEL_KEY = "upstream-channel-secret-7d41c9e2";
/** A Gemini-style key in `?key=`: not shaped like a gateway key, so only leaving out the query keeps it out. */
const QUERY_KEY = "AIzaSyQueryKeyThatIsNotAGatewayKey42";

let upstream: OpenAiUpstream;
let gw: TestGateway;
let token: CreatedToken;
let channelId: string;
const lines: string[] = [];

beforeAll(async () => {
  upstream = await startOpenAiUpstream();
  gw = await startTestGateway({ env: { GATEWAY_LOG_REQUESTS: "1" }, log: createJsonLogger((line) => lines.push(line), Date.now) });
  channelId = await createChannel(gw, { name: "logged", type: "openai", base_url: upstream.url, api_key: CHANNEL_KEY, models: [MODEL] });
  token = await createToken(gw);
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const chatBody = (extra: object = {}) => JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hello" }], ...extra });

/** The access log line of the request that got `response`, found by its request id. */
function lineOf(response: Response): Record<string, unknown> {
  const requestId = response.headers.get("x-request-id");
  const found = lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === "request" && entry.request_id === requestId);
  expect(found).toHaveLength(1);
  return found[0];
}

/** What every line has; `fields` are the request's own. */
const expected = (response: Response, fields: Record<string, unknown>) => ({
  time: expect.any(String),
  level: "info",
  message: "request",
  duration_ms: expect.any(Number),
  request_id: response.headers.get("x-request-id"),
  ...fields,
});

test("a served request: method, path, status, duration, request id, token id, channel and attempts", async () => {
  const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(token.key), body: chatBody() });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  const line = lineOf(response);
  expect(line).toEqual(expected(response, { method: "POST", path: "/v1/chat/completions", status: 200, token_id: token.tokenId, channel_id: channelId, attempts: 1 }));
  expect(line.duration_ms as number).toBeGreaterThanOrEqual(0);
});

test("a stream is logged when its head is ready, before its body ends, and says stream: true", async () => {
  upstream.setBehavior({ chunkDelayMs: 20 });
  try {
    const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(token.key), body: chatBody({ stream: true }) });
    expect(response.status).toBe(200);
    expect(lineOf(response)).toEqual(
      expected(response, { method: "POST", path: "/v1/chat/completions", status: 200, stream: true, token_id: token.tokenId, channel_id: channelId, attempts: 1 }),
    );
    expect(await response.text()).toContain("data: [DONE]");
  } finally {
    upstream.setBehavior({});
  }
});

test("a Gemini caller's stream without ?alt=sse, one JSON array, says stream: true too", async () => {
  const response = await gw.fetch(`/v1beta/models/${MODEL}:streamGenerateContent`, {
    method: "POST",
    headers: bearer(token.key),
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("application/json");
  await response.arrayBuffer();
  expect(lineOf(response)).toMatchObject({ path: `/v1beta/models/${MODEL}:streamGenerateContent`, status: 200, stream: true });
});

test("a 401 has no token id; its path leaves out the query and the key in it", async () => {
  const response = await gw.fetch(`/v1/models?key=${QUERY_KEY}`);
  expect(response.status).toBe(401);
  expect(lineOf(response)).toEqual(expected(response, { method: "GET", path: "/v1/models", status: 401 }));
});

test("a 404 of an unknown endpoint is logged with its path and status", async () => {
  const response = await gw.fetch(`/v1/nope?key=${token.key}`, { headers: bearer(token.key) });
  expect(response.status).toBe(404);
  expect(lineOf(response)).toEqual(expected(response, { method: "GET", path: "/v1/nope", status: 404 }));
});

test("a Gemini caller's ?key= is authenticated and left out of the logged path", async () => {
  const response = await gw.fetch(`/v1beta/models/${MODEL}:generateContent?key=${token.key}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(lineOf(response)).toEqual(
    expected(response, { method: "POST", path: `/v1beta/models/${MODEL}:generateContent`, status: 200, token_id: token.tokenId, channel_id: channelId, attempts: 1 }),
  );
});

test("no line holds an API key, the management key, a channel key or a ?key= value", async () => {
  const admin = await gw.admin("GET", "/v1/admin/channels");
  expect(admin.status).toBe(200);
  await gw.fetch("/v1/models", { headers: { "x-goog-api-key": QUERY_KEY } });
  await gw.fetch("/v1/models", { headers: { "x-api-key": token.key } });
  expect(lines.filter((line) => JSON.parse(line).message === "request").length).toBeGreaterThanOrEqual(8);
  for (const secret of [token.key, token.key.slice(6, 20), gw.managementKey, gw.managementKey.slice(6, 20), CHANNEL_KEY, QUERY_KEY]) {
    for (const line of lines) expect(line).not.toContain(secret);
  }
});

test("with GATEWAY_LOG_REQUESTS off (the default), nothing is logged", async () => {
  const quiet: string[] = [];
  const off = await startTestGateway({ log: createJsonLogger((line) => quiet.push(line), Date.now) });
  try {
    const served = await off.fetch("/v1/chat/completions", { method: "POST", headers: bearer(off.demoKey), body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hello" }] }) });
    expect(served.status).toBe(200);
    await served.arrayBuffer();
    expect((await off.fetch("/v1/models")).status).toBe(401);
    expect((await off.fetch("/v1/nope")).status).toBe(404);
    expect(quiet).toEqual([]);
  } finally {
    await off.close();
  }
});
