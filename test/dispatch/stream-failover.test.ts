import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream } from "../helpers/openai-upstream.ts";
import { responseHead, startRawUpstream } from "../helpers/raw-upstream.ts";
import { startAnthropicUpstream } from "../helpers/anthropic-upstream.ts";

/**
 * A stream that fails before the first part of its answer has shown the caller nothing: the
 * next channel serves it, as after a failure before the headers, and the failure counts
 * against the channel. Before, the caller got a 200 whose stream was only an error event, the
 * next channel was never tried, and a channel that always did this never cooled.
 */

let gw: TestGateway;
const upstreams: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

const SSE = { "content-type": "text/event-stream" };

/** A loopback upstream for a failing channel's base_url, and how many requests it got. */
interface FailingUpstream {
  url: string;
  calls(): number;
  close(): Promise<void>;
}

/** Serves `answer` as an openai upstream. */
async function scripted(answer: () => Response): Promise<FailingUpstream> {
  const upstream = await startOpenAiUpstream({ script: answer });
  return { url: upstream.url, calls: () => upstream.requests.length, close: () => upstream.close() };
}

/** How an upstream can fail after its 200 and before its answer. */
const FAILURES: Record<string, () => Promise<FailingUpstream>> = {
  "drops the connection after its head": async () => {
    // Bun.serve sends no head before the first body byte, so the head is written by hand.
    const raw = await startRawUpstream((exchange) => {
      exchange.write(responseHead(200, { ...SSE, "transfer-encoding": "chunked" }));
      setTimeout(() => exchange.end(), 10);
    });
    return { url: `${raw.url}/v1`, calls: () => raw.exchanges.length, close: () => raw.close() };
  },
  "sends an error event first": () => scripted(() => new Response(`data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error" } })}\n\n`, { headers: SSE })),
  "ends without an event": () => scripted(() => new Response("", { headers: SSE })),
};

/** A streamed request for `model` in each caller format. */
const CALLERS: Record<string, (model: string) => Promise<Response>> = {
  openai: (model) => post("/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  anthropic: (model) => post("/v1/messages", { model, stream: true, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }),
  gemini: (model) => post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
};

function post(path: string, body: unknown): Promise<Response> {
  return gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) });
}

let models = 0;

/** A model served by `failing` at priority 10 and a healthy openai upstream at 0; the ids of both channels. */
async function failingThenHealthy(type: string, failing: { url: string }): Promise<{ model: string; failingId: string; healthyId: string }> {
  const model = `stream-failover-${++models}`;
  const healthy = await startOpenAiUpstream();
  upstreams.push(healthy);
  const create = (name: string, kind: string, url: string, priority: number) =>
    gw.admin("POST", "/v1/admin/channels", { name, type: kind, base_url: url, api_key: "k", models: [model], priority }).then((r) => r.body.id as string);
  return { model, failingId: await create("failing", type, failing.url, 10), healthyId: await create("healthy", "openai", healthy.url, 0) };
}

async function usageRowOf(response: Response) {
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
  return listed.body.usage.find((row: { request_id: string }) => row.request_id === response.headers.get("x-request-id"));
}

for (const [caller, call] of Object.entries(CALLERS)) {
  for (const [failure, start] of Object.entries(FAILURES)) {
    test(`${caller} caller, an upstream that ${failure}: the next channel serves the stream`, async () => {
      const failing = await start();
      upstreams.push(failing);
      const { model, healthyId } = await failingThenHealthy("openai", failing);
      const response = await call(model);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-gateway-channel")).toBe(healthyId);
      expect(response.headers.get("x-gateway-attempts")).toBe("2");
      const text = await response.text();
      expect(text).toContain("Hello");
      expect(text).not.toContain("error");
      expect(failing.calls()).toBe(1);
      const row = await usageRowOf(response);
      expect({ status: row.status, channel: row.channel_id }).toEqual({ status: 200, channel: healthyId });
    });
  }
}

test("an anthropic upstream's overloaded_error before any text: the next channel serves, and three in a row cool the channel", async () => {
  const overloaded = await startAnthropicUpstream({
    script: () =>
      new Response(
        `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n` +
          `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`,
        { headers: SSE },
      ),
  });
  upstreams.push(overloaded);
  const { model, failingId, healthyId } = await failingThenHealthy("anthropic", overloaded);
  for (let i = 0; i < 3; i++) {
    const response = await CALLERS.anthropic!(model);
    expect(response.headers.get("x-gateway-channel")).toBe(healthyId);
    expect(await response.text()).not.toContain("overloaded_error");
  }
  const listed = await gw.admin("GET", "/v1/admin/channels");
  expect(listed.body.channels.find((c: { id: string }) => c.id === failingId).status).toBe("cooling");
});

test("alone, such a channel gives the caller the gateway's 502, and the request costs nothing", async () => {
  const response = await CALLERS.openai!(await pricedModelAlone(await FAILURES["sends an error event first"]!()));
  expect(response.status).toBe(502);
  expect(await response.json()).toEqual({ error: { message: "Upstream failed: upstream error: The server is overloaded", type: "upstream_error", code: 502 } });
  await expectChargedNothing(response);
});

test("a stream that breaks after the hold but before any of its answer costs nothing either", async () => {
  // Keep-alive comments for longer than the dispatcher holds a stream (1 s), then an error event.
  const silent = await scripted(() => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < 6; i++) {
          controller.enqueue(encoder.encode(": keep-alive\n\n"));
          await Bun.sleep(250);
        }
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error" } })}\n\n`));
        controller.close();
      },
    });
    return new Response(body, { headers: SSE });
  });
  const response = await CALLERS.openai!(await pricedModelAlone(silent));
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('"type":"upstream_error"');
  await expectChargedNothing(response);
});

/** A priced model whose only channel is `failing`. */
async function pricedModelAlone(failing: FailingUpstream): Promise<string> {
  upstreams.push(failing);
  const model = `stream-failover-${++models}`;
  await gw.admin("POST", "/v1/admin/channels", { name: "alone", type: "openai", base_url: failing.url, api_key: "k", models: [model] });
  expect((await gw.admin("POST", "/v1/admin/prices", { model, input_per_million: 1_000, output_per_million: 1_000 })).status).toBe(200);
  return model;
}

/** The request's usage row says 502 and charges nothing, not even the prompt. */
async function expectChargedNothing(response: Response): Promise<void> {
  const row = await usageRowOf(response);
  expect({ status: row.status, cost: row.cost, prompt_tokens: row.prompt_tokens }).toEqual({ status: 502, cost: 0, prompt_tokens: 0 });
}

/** An openai upstream whose stream is only `error`, an error object, after its 200. */
const erroringFirst = (error: Record<string, unknown>) => scripted(() => new Response(`data: ${JSON.stringify({ error })}\n\n`, { headers: SSE }));

test("an error event first that is the caller's own (a prompt past the context window) is their 400: no other channel is tried", async () => {
  const tooLong = await erroringFirst({ message: "This model's maximum context length is 8192 tokens", type: "invalid_request_error", code: "context_length_exceeded" });
  upstreams.push(tooLong);
  const { model } = await failingThenHealthy("openai", tooLong);
  for (const [caller, call] of Object.entries(CALLERS)) {
    const response = await call(model);
    expect({ caller, status: response.status, attempts: response.headers.get("x-gateway-attempts") }).toEqual({ caller, status: 400, attempts: "1" });
    expect(await response.text()).toContain("maximum context length is 8192 tokens");
    const row = await usageRowOf(response);
    expect({ status: row.status, cost: row.cost }).toEqual({ status: 400, cost: 0 });
  }
  expect(tooLong.calls()).toBe(3);
});

test("a rate limit sent as the first event is the upstream's 429: alone, the caller gets 429 with Retry-After", async () => {
  const limited = await erroringFirst({ message: "Rate limit reached for requests", type: "rate_limit_error", code: 429 });
  const response = await CALLERS.openai!(await pricedModelAlone(limited));
  expect(response.status).toBe(429);
  expect(response.headers.get("retry-after")).toBe("1");
});
