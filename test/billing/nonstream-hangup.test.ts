import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGeminiUpstream } from "../helpers/gemini-upstream.ts";
import { sleep } from "../helpers/common.ts";
import { account, expectBooksBalanced, newAccount, usageRows } from "./_inprocess.ts";

/**
 * A non-streaming upstream sends its 200 head once the work is done, and its provider bills
 * it. A client that hangs up while the gateway still reads that answer's body does not stop
 * the read: the answer is read to its end and charged (a 499 row). One that hangs up before
 * the head is refunded in full, as before.
 */

const START = 10_000_000;
let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** Resolved when the upstream has sent its head and the first half of its body. */
let halfSent: () => void = () => {};
/** How long the upstream waits before its head (the model at work). */
let thinkMs = 0;

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { model: string; n?: number };
      await sleep(thinkMs);
      const whole = new URL(request.url).pathname.endsWith("/images/generations")
        ? JSON.stringify({ created: 1, data: Array.from({ length: body.n ?? 1 }, () => ({ b64_json: "A".repeat(200_000) })) })
        : JSON.stringify({ id: "c", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }], usage: { prompt_tokens: 1000, completion_tokens: 2000, total_tokens: 3000 } });
      const half = Math.floor(whole.length / 2);
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode(whole.slice(0, half)));
          halfSent();
          await sleep(400);
          controller.enqueue(encoder.encode(whole.slice(half)));
          controller.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "application/json" } });
    },
  });
  gw = await startTestGateway({ strictPricing: true });
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "slow-image", mode: "image", per_image: 0.04 })).status).toBe(200);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "slow-chat", input_per_million: 3, output_per_million: 15 })).status).toBe(200);
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "slow-body", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: "sk-slow", models: ["slow-image", "slow-chat"] })).status).toBe(201);
});

afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});

/** Posts `body` and hangs up `afterMs` after the upstream sent half its body, or after `beforeHeadMs` from the start. */
async function hangUp(key: string, path: string, body: unknown, when: { midBody: true } | { beforeHeadMs: number }) {
  const sent = new Promise<void>((resolve) => (halfSent = resolve));
  const controller = new AbortController();
  const pending = gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body), signal: controller.signal }).catch(() => null);
  if ("midBody" in when) await sent.then(() => sleep(50));
  else await sleep(when.beforeHeadMs);
  controller.abort();
  await pending;
}

/** The account's one usage row's status and cost, and its balance, once the row is in. */
async function settled(id: string) {
  const [row] = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  return { status: row!.status, cost: row!.cost_micros, balance: (await account(gw, id)).balance_micros };
}

test("images: the client hangs up while the 200's body is read; the two images are still charged", async () => {
  const { id, key } = await newAccount(gw, START);
  await hangUp(key, "/v1/images/generations", { model: "slow-image", prompt: "a cat", n: 2, size: "1024x1024" }, { midBody: true });
  expect(await settled(id)).toEqual({ status: 499, cost: 80_000, balance: START - 80_000 });
});

test("chat: the client hangs up while the 200's body is read; its usage (1000 + 2000 tokens) is still charged", async () => {
  const { id, key } = await newAccount(gw, START);
  await hangUp(key, "/v1/chat/completions", { model: "slow-chat", max_tokens: 3000, messages: [{ role: "user", content: "hi" }] }, { midBody: true });
  expect(await settled(id)).toEqual({ status: 499, cost: 1000 * 3 + 2000 * 15, balance: START - 33_000 });
});

test("chat: the client hangs up before the upstream's head: a 499 row, refunded in full", async () => {
  thinkMs = 400;
  try {
    const { id, key } = await newAccount(gw, START);
    await hangUp(key, "/v1/chat/completions", { model: "slow-chat", max_tokens: 3000, messages: [{ role: "user", content: "hi" }] }, { beforeHeadMs: 100 });
    expect(await settled(id)).toEqual({ status: 499, cost: 0, balance: START });
  } finally {
    thinkMs = 0;
  }
});

test("chat: the first channel's 200 holds no usable answer and the next is tried; the client hangs up before that one's head: a 499 row, refunded in full", async () => {
  // Gemini's answer for a call the model could not write: of no use to an OpenAI caller, so the next channel is tried.
  const malformed = { candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", index: 0 }], usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 } };
  const gemini = await startGeminiUpstream({ script: () => Response.json(malformed) });
  thinkMs = 400;
  try {
    const model = "slow-chat-after-gemini";
    expect((await gw.admin("POST", "/v1/admin/prices", { model, input_per_million: 3, output_per_million: 15 })).status).toBe(200);
    expect((await gw.admin("POST", "/v1/admin/channels", { name: "gemini-first", type: "gemini", base_url: gemini.url, api_key: "k", models: [model], priority: 10 })).status).toBe(201);
    expect((await gw.admin("POST", "/v1/admin/channels", { name: "slow-second", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: "sk-slow", models: [model], priority: 0 })).status).toBe(201);
    const { id, key } = await newAccount(gw, START);
    await hangUp(key, "/v1/chat/completions", { model, max_tokens: 3000, messages: [{ role: "user", content: "hi" }] }, { beforeHeadMs: 200 });
    expect(gemini.requests.length).toBe(1);
    expect(await settled(id)).toEqual({ status: 499, cost: 0, balance: START });
  } finally {
    thinkMs = 0;
    await gemini.close();
  }
});
