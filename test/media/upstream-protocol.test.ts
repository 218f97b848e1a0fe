import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson } from "../helpers/openai-media-upstream.ts";

/**
 * Upstream answers of the right shape but wrong content must not reach the caller as a 200
 * with holes: they are protocol errors (502 after failover), or are cleaned up.
 */

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** The JSON the loopback upstream answers next. */
let answer: unknown = {};

beforeAll(async () => {
  upstream = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json(answer) });
  gw = await startTestGateway();
  await createChannel(gw, {
    name: "odd-upstream",
    type: "openai",
    base_url: `http://127.0.0.1:${upstream.port}/v1`,
    api_key: "sk-up",
    models: ["odd-embed", "odd-rerank"],
  });
  for (const [model, mode] of [["odd-embed", "embedding"], ["odd-rerank", "rerank"]]) {
    expect((await gw.admin("POST", "/v1/admin/prices", { model, mode, input_per_million: 1, per_1k_documents: 1 })).status).toBe(200);
  }
});

afterAll(async () => {
  await gw.close();
  upstream.stop(true);
});

test("embeddings with a repeated index are a 502, not a 200 with a null vector", async () => {
  answer = { data: [{ index: 1, embedding: [1] }, { index: 1, embedding: [2] }] };
  const response = await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "odd-embed", input: ["a", "b"] });
  expect(response.status).toBe(502);
  expect((await response.json()).error.type).toBe("upstream_error");
});

test("embeddings with an index past the inputs are a 502", async () => {
  answer = { data: [{ index: 0, embedding: [1] }, { index: 7, embedding: [2] }] };
  expect((await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "odd-embed", input: ["a", "b"] })).status).toBe(502);
});

test("a base64 embedding that is not whole float32 values is a 502, not an empty vector", async () => {
  answer = { data: [{ index: 0, embedding: "AAA" }] };
  expect((await postJson(gw, gw.demoKey, "/v1/embeddings", { model: "odd-embed", input: "a" })).status).toBe(502);
});

test("rerank results naming a document twice or one that does not exist keep each document once", async () => {
  answer = { results: [{ index: 0, relevance_score: 0.5 }, { index: 0, relevance_score: 0.4 }, { index: 9, relevance_score: 0.9 }, { index: 1, relevance_score: 0.1 }] };
  const response = await postJson(gw, gw.demoKey, "/v1/rerank", { model: "odd-rerank", query: "q", documents: ["x", "y"] });
  expect(response.status).toBe(200);
  const body = await response.json();
  expect(body.results.map((r: { index: number }) => r.index)).toEqual([0, 1]);
  expect(body.results[0].relevance_score).toBe(0.5);
});
