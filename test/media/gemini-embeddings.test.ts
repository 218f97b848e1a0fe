import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson } from "../helpers/openai-media-upstream.ts";
import { geminiInvalidKeyBody } from "../helpers/gemini-upstream.ts";

/** /v1/embeddings over a `gemini` channel: batchEmbedContents on Gemini's wire format. */

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
const received: { path: string; key: string | null; body: any }[] = [];

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { requests: { content: { parts: { text: string }[] } }[] };
      received.push({ path: new URL(request.url).pathname, key: request.headers.get("x-goog-api-key"), body });
      // One vector per text: its length and its first character code, so order is checkable.
      return Response.json({ embeddings: body.requests.map((r) => ({ values: [r.content.parts[0]!.text.length, r.content.parts[0]!.text.charCodeAt(0)] })) });
    },
  });
  gw = await startTestGateway();
  await createChannel(gw, {
    name: "gemini",
    type: "gemini",
    base_url: `http://127.0.0.1:${upstream.port}`,
    api_key: "gemini-secret",
    models: ["g-embed"],
    model_map: { "g-embed": "text-embedding-004" },
  });
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "g-embed", mode: "embedding", input_per_million: 1 })).status).toBe(200);
});

afterAll(async () => {
  await gw.close();
  upstream.stop(true);
});

test("inputs go to models/{mapped}:batchEmbedContents with the channel's key; vectors come back in input order", async () => {
  const response = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "g-embed", input: ["hello", "a", "zz"], dimensions: 2 });
  expect(response.status).toBe(200);
  const body = await response.json();
  expect(body.data.map((d: any) => [d.index, d.embedding])).toEqual([[0, [5, 104]], [1, [1, 97]], [2, [2, 122]]]);
  expect(body.model).toBe("g-embed");
  // Gemini does not count embedding tokens: the estimate (4 characters a token, at least 1 each) is billed and shown.
  expect(body.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  const call = received.at(-1)!;
  expect(call.path).toBe("/v1beta/models/text-embedding-004:batchEmbedContents");
  expect(call.key).toBe("gemini-secret");
  expect(call.body.requests).toEqual([
    { model: "models/text-embedding-004", content: { parts: [{ text: "hello" }] }, outputDimensionality: 2 },
    { model: "models/text-embedding-004", content: { parts: [{ text: "a" }] }, outputDimensionality: 2 },
    { model: "models/text-embedding-004", content: { parts: [{ text: "zz" }] }, outputDimensionality: 2 },
  ]);
});

test("token IDs are refused with a 400 that says to send text: Gemini embeds text only, and nothing is sent or charged", async () => {
  const before = received.length;
  const usageBefore = (await gw.admin("GET", "/v1/admin/usage?limit=200")).body.usage.length;
  const response = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "g-embed", input: [[1, 2, 3]] });
  expect(response.status).toBe(400);
  const body = await response.json();
  expect(body.error.type).toBe("invalid_request_error");
  expect(body.error.message).toContain("not token IDs");
  expect(received.length).toBe(before);
  const rows = (await gw.admin("GET", "/v1/admin/usage?limit=200")).body.usage;
  expect(rows.length).toBe(usageBefore + 1);
  expect(rows[0].cost).toBe(0);
});

test("a gemini channel is never offered rerank, images or audio: those answer 503 for its models", async () => {
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "g-embed", mode: "rerank", per_1k_documents: 1 })).status).toBe(200);
  const response = await postJson(gw, gw.demoKey, "/v1/rerank", { model: "g-embed", query: "q", documents: ["d"] });
  expect(response.status).toBe(503);
  expect(received.every((r) => r.path.endsWith(":batchEmbedContents"))).toBe(true);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "g-embed", mode: "embedding", input_per_million: 1 })).status).toBe(200);
});

test("a gemini channel whose key Gemini refuses (400 API_KEY_INVALID) fails over, and alone is the gateway's 502, never the caller's 400", async () => {
  const refusing = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json(geminiInvalidKeyBody(), { status: 400 }) });
  try {
    const refusingUrl = `http://127.0.0.1:${refusing.port}`;
    const fields = { type: "gemini", model_map: { "g-embed-keys": "text-embedding-004" } };
    await createChannel(gw, { ...fields, name: "gemini wrong key", base_url: refusingUrl, api_key: "revoked", models: ["g-embed-keys"], priority: 10 });
    const spare = await createChannel(gw, { ...fields, name: "gemini spare", base_url: `http://127.0.0.1:${upstream.port}`, api_key: "gemini-secret", models: ["g-embed-keys"] });
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "g-embed-keys", mode: "embedding", input_per_million: 1 })).status).toBe(200);
    const served = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "g-embed-keys", input: "hello" });
    expect(served.status).toBe(200);
    expect(served.headers.get("x-gateway-channel")).toBe(spare);
    expect(served.headers.get("x-gateway-attempts")).toBe("2");

    await createChannel(gw, { ...fields, name: "gemini wrong key alone", base_url: refusingUrl, api_key: "revoked", models: ["g-embed-alone"] });
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "g-embed-alone", mode: "embedding", input_per_million: 1 })).status).toBe(200);
    const alone = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "g-embed-alone", input: "hello" });
    expect(alone.status).toBe(502);
    expect(await alone.json()).toEqual({ error: { message: "Upstream failed: the channel's API key was rejected", type: "upstream_error", code: 502 } });
  } finally {
    refusing.stop(true);
  }
});

test("OpenAI's user, which a gemini channel has no field for, is named in x-gateway-warnings and not sent", async () => {
  const response = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "g-embed", input: "hello", user: "end-user-7" });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-gateway-warnings")).toContain("user");
  expect(JSON.stringify(received.at(-1)!.body)).not.toContain("end-user-7");
});
