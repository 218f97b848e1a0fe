import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "@google/genai";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import {
  createChannel,
  postJson,
  priceModel,
  startOpenAiMediaUpstream,
  upstreamEmbedding,
  upstreamPromptTokens,
  usageRowsOf,
  type MediaUpstream,
} from "../helpers/openai-media-upstream.ts";
import { genaiClient } from "./_support.ts";

/**
 * The @google/genai SDK's models.embedContent, unchanged but for base URL and key: it calls
 * {model}:batchEmbedContents, which the gateway serves like /v1/embeddings, on the demo mock
 * channel, an openai channel and a gemini channel.
 */

let gw: TestGateway;
let openaiUp: MediaUpstream;
let geminiUp: ReturnType<typeof Bun.serve>;
const geminiCalls: { path: string; body: any }[] = [];

beforeAll(async () => {
  openaiUp = startOpenAiMediaUpstream();
  geminiUp = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { requests: { content: { parts: { text: string }[] } }[] };
      geminiCalls.push({ path: new URL(request.url).pathname, body });
      return Response.json({ embeddings: body.requests.map((r) => ({ values: [r.content.parts[0]!.text.length, 0.5] })) });
    },
  });
  gw = await startTestGateway();
  await createChannel(gw, { name: "openai", type: "openai", base_url: openaiUp.url, api_key: "sk-up", models: ["oa-embed"] });
  await createChannel(gw, { name: "gemini", type: "gemini", base_url: `http://127.0.0.1:${geminiUp.port}`, api_key: "g-up", models: ["gm-embed"] });
  await priceModel(gw, "oa-embed", "embeddings");
  await priceModel(gw, "gm-embed", "embeddings");
});
afterAll(async () => {
  await gw.close();
  openaiUp.close();
  geminiUp.stop(true);
});

describe("the SDK's embedContent", () => {
  test("on the demo mock channel: the same vectors /v1/embeddings gives, at the asked size", async () => {
    const response = await genaiClient(gw, gw.demoKey).models.embedContent({
      model: "demo-embed",
      contents: ["The quick brown fox", "jumps over"],
      config: { outputDimensionality: 16 },
    });
    const openaiForm = await (await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "demo-embed", input: ["The quick brown fox", "jumps over"], dimensions: 16 })).json();
    expect(response.embeddings?.map((e) => e.values)).toEqual(openaiForm.data.map((d: { embedding: number[] }) => d.embedding));
    expect(response.embeddings?.[0]?.values).toHaveLength(16);
  });

  test("on an openai channel: the upstream's vectors, billed on the upstream's count, one usage row", async () => {
    const user = await adminCreateUser(gw, { email: "genai-embed@example.com", balance: 1 });
    const { key } = await adminCreateToken(gw, { user_id: user.id, name: "embed" });
    const response = await genaiClient(gw, key).models.embedContent({ model: "oa-embed", contents: ["alpha", "beta"] });
    expect(response.embeddings?.map((e) => e.values)).toEqual([upstreamEmbedding("alpha"), upstreamEmbedding("beta")]);
    expect(openaiUp.requests.at(-1)!.body).toMatchObject({ model: "oa-embed", input: ["alpha", "beta"] });

    const requestId = response.sdkHttpResponse?.headers?.["x-request-id"];
    expect(typeof requestId).toBe("string");
    const rows = await usageRowsOf(gw, requestId!);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: "oa-embed", endpoint: "/v1beta/models/oa-embed:batchEmbedContents", prompt_tokens: upstreamPromptTokens(["alpha", "beta"]), status: 200 });
    const after = (await gw.admin("GET", `/v1/admin/users/${user.id}`)).body;
    expect(after.total_usage).toBeCloseTo(rows[0].cost, 9);
    expect(after.balance).toBeCloseTo(1 - rows[0].cost, 9);
  });

  test("on a gemini channel: one batchEmbedContents upstream with the mapped model and the size, the contents as the SDK sent them", async () => {
    const response = await genaiClient(gw, gw.demoKey).models.embedContent({ model: "gm-embed", contents: "hello", config: { outputDimensionality: 2 } });
    expect(response.embeddings?.map((e) => e.values)).toEqual([[5, 0.5]]);
    expect(geminiCalls.at(-1)).toEqual({
      path: "/v1beta/models/gm-embed:batchEmbedContents",
      body: { requests: [{ model: "models/gm-embed", content: { parts: [{ text: "hello" }], role: "user" }, outputDimensionality: 2 }] },
    });
  });

  test("on a gemini channel: taskType, title, a content's several parts and fields the gateway does not know go as sent", async () => {
    const response = await genaiClient(gw, gw.demoKey).models.embedContent({
      model: "gm-embed",
      contents: [{ parts: [{ text: "first part" }, { text: "second part" }] }],
      config: { taskType: "RETRIEVAL_DOCUMENT", title: "Doc title" },
    });
    expect(response.embeddings?.map((e) => e.values)).toEqual([[10, 0.5]]);
    expect(geminiCalls.at(-1)!.body).toEqual({
      requests: [{ model: "models/gm-embed", content: { parts: [{ text: "first part" }, { text: "second part" }] }, taskType: "RETRIEVAL_DOCUMENT", title: "Doc title" }],
    });
    expect(response.sdkHttpResponse?.headers?.["x-gateway-warnings"]).toBeUndefined();

    const raw = await postJson(gw, gw.demoKey, "/v1beta/models/gm-embed:embedContent", {
      content: { parts: [{ text: "query" }] },
      taskType: "RETRIEVAL_QUERY",
      futureField: { kept: true },
    });
    expect(raw.status).toBe(200);
    expect(geminiCalls.at(-1)!.body.requests).toEqual([{ model: "models/gm-embed", content: { parts: [{ text: "query" }] }, taskType: "RETRIEVAL_QUERY", futureField: { kept: true } }]);
  });

  test("taskType and title, which no upstream is sent, are named in the warnings header", async () => {
    const response = await genaiClient(gw, gw.demoKey).models.embedContent({
      model: "demo-embed",
      contents: "a document",
      config: { taskType: "RETRIEVAL_DOCUMENT", title: "Doc" },
    });
    expect(response.embeddings).toHaveLength(1);
    const warnings = response.sdkHttpResponse?.headers?.["x-gateway-warnings"] ?? "";
    expect(warnings).toContain("taskType");
    expect(warnings).toContain("title");
  });

  test("the SDK raises its ApiError for an unknown model (404) and a chat model (400)", async () => {
    const client = genaiClient(gw, gw.demoKey);
    for (const [model, status] of [["no-such-embed", 404], ["demo-chat", 400]] as const) {
      const error = await client.models.embedContent({ model, contents: "x" }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(status);
    }
  });
});

test("the model list says which actions each model serves", async () => {
  const client = genaiClient(gw, gw.demoKey);
  expect((await client.models.get({ model: "demo-embed" })).supportedActions).toEqual(["embedContent", "batchEmbedContents"]);
  expect((await client.models.get({ model: "demo-chat" })).supportedActions).toEqual(["generateContent", "streamGenerateContent", "countTokens"]);
});

describe("the wire format", () => {
  test(":embedContent answers one {embedding: {values}}; multi-part text is embedded as one input", async () => {
    const single = await postJson(gw, gw.demoKey, "/v1beta/models/demo-embed:embedContent", { content: { parts: [{ text: "one" }, { text: "two" }] } });
    expect(single.status).toBe(200);
    const body = await single.json();
    const joined = await (await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "demo-embed", input: "one\ntwo" })).json();
    expect(body).toEqual({ embedding: { values: joined.data[0].embedding } });
  });

  test("a key without the embeddings permission gets 403; the chat permission is not enough", async () => {
    const user = await adminCreateUser(gw, { email: "chat-only@example.com", balance: 1 });
    const { key } = await adminCreateToken(gw, { user_id: user.id, name: "chat only", permissions: ["chat"] });
    const response = await postJson(gw, key, "/v1beta/models/demo-embed:batchEmbedContents", { requests: [{ content: { parts: [{ text: "x" }] } }] });
    expect(response.status).toBe(403);
    expect((await response.json()).error.code).toBe(403);
  });

  test.each([
    ["a request for another model", { requests: [{ model: "models/other", content: { parts: [{ text: "x" }] } }] }],
    ["sizes that differ within a batch", { requests: [{ content: { parts: [{ text: "x" }] }, outputDimensionality: 4 }, { content: { parts: [{ text: "y" }] } }] }],
    ["an image part", { requests: [{ content: { parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] } }] }],
    ["empty text", { requests: [{ content: { parts: [{ text: "" }] } }] }],
    ["no requests", { requests: [] }],
    ["requests not an array", { requests: "x" }],
  ])("%s is a 400 in the spec's shape, and nothing is billed", async (_label, body) => {
    const before = (await gw.admin("GET", "/v1/admin/usage?limit=1")).body.total;
    const response = await postJson(gw, gw.demoKey, "/v1beta/models/demo-embed:batchEmbedContents", body);
    expect(response.status).toBe(400);
    const error = (await response.json()).error;
    expect(error).toMatchObject({ type: "invalid_request_error", code: 400 });
    expect((await gw.admin("GET", "/v1/admin/usage?limit=1")).body.total).toBe(before);
  });

  const other = { model: "models/other", content: { parts: [{ text: "x" }] } };
  const empty = { content: { parts: [{ text: "" }] } };
  test.each([
    ["batchEmbedContents", "requests[1].model", { requests: [{ content: { parts: [{ text: "y" }] } }, other] }],
    ["embedContent", "model", other],
    ["batchEmbedContents", "requests[0].content", { requests: [empty] }],
    ["embedContent", "content", empty],
  ])(":%s names the field at fault as its body has it: '%s'", async (method, field, body) => {
    const response = await postJson(gw, gw.demoKey, `/v1beta/models/demo-embed:${method}`, body);
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toStartWith(`Invalid '${field}':`);
  });
});
