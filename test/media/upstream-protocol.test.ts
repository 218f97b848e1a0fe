import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson, postUpload, priceModel, speechWav } from "../helpers/openai-media-upstream.ts";

/**
 * Upstream answers of the right shape but wrong content must not reach the caller as a 200
 * with holes: they are protocol errors (502 after failover), or are cleaned up.
 */

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** The JSON the loopback upstream answers next. */
let answer: unknown = {};

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (request.url.endsWith("/audio/transcriptions")) {
        await request.arrayBuffer();
        // Half a JSON transcript, then the connection breaks off.
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"text":"half a tran'));
            setTimeout(() => controller.error(new Error("upstream broke off")), 20);
          },
        });
        return new Response(body, { headers: { "content-type": "application/json" } });
      }
      if (!request.url.endsWith("/audio/speech")) return Response.json(answer);
      // Some audio, then the connection breaks off mid-body.
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent++ < 2) return controller.enqueue(new Uint8Array(4096).fill(1));
          await Bun.sleep(20);
          controller.error(new Error("upstream broke off"));
        },
      });
      return new Response(body, { headers: { "content-type": "audio/mpeg" } });
    },
  });
  // Each test feeds the one channel a protocol failure, which counts toward its breaker.
  gw = await startTestGateway({ env: { GATEWAY_BREAKER_FAILURES: "1000" } });
  await createChannel(gw, {
    name: "odd-upstream",
    type: "openai",
    base_url: `http://127.0.0.1:${upstream.port}/v1`,
    api_key: "sk-up",
    models: ["odd-embed", "odd-rerank", "odd-tts", "odd-whisper"],
  });
  await priceModel(gw, "odd-whisper", "transcriptions");
  for (const [model, mode] of [["odd-embed", "embedding"], ["odd-rerank", "rerank"], ["odd-tts", "speech"]]) {
    const prices = { input_per_million: 1, per_1k_documents: 1, per_1k_characters: 1 };
    expect((await gw.admin("POST", "/v1/admin/prices", { model, mode, ...prices })).status).toBe(200);
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

test("speech whose upstream breaks off mid-body: the client's read fails, the row says 502 and nothing is charged", async () => {
  const before = await gw.database.db.selectFrom("users").select("balance_micros").where("email", "=", "demo@gateway.local").executeTakeFirstOrThrow();
  const response = await postJson(gw, gw.demoKey, "/v1/audio/speech", { model: "odd-tts", input: "x".repeat(1000) });
  expect(response.status).toBe(200);
  const requestId = response.headers.get("x-request-id")!;
  await expect(response.arrayBuffer()).rejects.toThrow();
  await Bun.sleep(50);
  await gw.services.usage.flush();
  const row = await gw.database.db.selectFrom("usage_logs").select(["status", "cost_micros"]).where("request_id", "=", requestId).executeTakeFirstOrThrow();
  expect(row).toEqual({ status: 502, cost_micros: 0 });
  const after = await gw.database.db.selectFrom("users").select("balance_micros").where("email", "=", "demo@gateway.local").executeTakeFirstOrThrow();
  expect(after.balance_micros).toBe(before.balance_micros);
  expect(await gw.database.db.selectFrom("holds").selectAll().where("id", "=", requestId).execute()).toEqual([]);
});

test("a transcription whose body the upstream breaks off is the upstream's 502, not the gateway's 500", async () => {
  const response = await postUpload(gw, gw.demoKey, "/v1/audio/transcriptions", { bytes: speechWav("broken body"), name: "a.wav" }, { model: "odd-whisper", response_format: "json" });
  expect(response.status).toBe(502);
  expect((await response.json()).error).toEqual({ message: "Upstream failed: the upstream broke off its answer", type: "upstream_error", code: 502 });
});
