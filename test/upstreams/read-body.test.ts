import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { readFixture } from "../helpers/loopback-upstream.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { responseHead, stalledError, startRawUpstream, type RawExchange, type RawUpstream } from "../helpers/raw-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";

/**
 * Answers read whole (not streamed) whose body misbehaves after a 2xx head: it stalls, breaks
 * off, or is not the API's JSON. Nothing has reached the caller yet, so each is a failure of
 * that channel: the next one serves, or the caller gets 504 (stalled) or 502, with one usage
 * row, no open hold, and the stalled upstream's connection closed by the gateway.
 */

const IDLE_MS = 200;
let gw: TestGateway;
let healthy: OpenAiUpstream;
const raws: RawUpstream[] = [];

beforeAll(async () => {
  // The overall deadline is far above the idle limit, so a stall that only it ended would show as its 502.
  gw = await startTestGateway({
    env: { GATEWAY_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS), GATEWAY_UPSTREAM_TIMEOUT_MS: "4000", GATEWAY_BREAKER_FAILURES: "2" },
  });
  healthy = await startOpenAiUpstream();
});
afterAll(async () => {
  await gw.close();
  await healthy.close();
  await Promise.all(raws.map((raw) => raw.close()));
});

/** Ways a 200 body goes wrong. */
const ANSWERS: Record<string, (exchange: RawExchange) => void> = {
  /** The head promises 500 bytes, then nothing comes and the connection stays open. */
  "headers, then silence": (exchange) => exchange.write(responseHead(200, { "content-type": "application/json", "content-length": "500" })),
  /** Half the JSON, then nothing. */
  "half the body, then silence": (exchange) => {
    const body = readFixture("openai-chat-completion.json");
    exchange.write(responseHead(200, { "content-type": "application/json", "content-length": String(body.length) }) + body.slice(0, 40));
  },
  /** The whole JSON, but the connection closes short of the Content-Length. */
  "the body breaks off": (exchange) => {
    const body = readFixture("openai-chat-completion.json");
    exchange.write(responseHead(200, { "content-type": "application/json", "content-length": String(body.length + 100) }) + body);
    exchange.end();
  },
  /** An error page with a 200 status. */
  "an HTML page": (exchange) => {
    const page = "<html><body>Gateway Timeout</body></html>";
    exchange.write(responseHead(200, { "content-type": "text/html", "content-length": String(page.length), connection: "close" }) + page);
    exchange.end();
  },
  /** A 503 whose error body stalls: the status is known, the rest of its body is not waited for. */
  "a 503 whose error body stalls": (exchange) => exchange.write(responseHead(503, { "content-type": "application/json", "content-length": "200" }) + '{"error":'),
};

let modelCounter = 0;

/** A fresh model served by a raw upstream answering `answer`, and optionally by the healthy upstream after it. */
async function modelWith(answer: (exchange: RawExchange) => void, backup: boolean) {
  const model = `plain-body-${++modelCounter}`;
  const raw = await startRawUpstream(answer);
  raws.push(raw);
  const create = async (name: string, baseUrl: string, priority: number) => {
    const created = await gw.admin("POST", "/v1/admin/channels", { name, type: "openai", base_url: baseUrl, api_key: "k", models: [model], priority });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const primaryId = await create("misbehaving", `${raw.url}/v1`, 10);
  const backupId = backup ? await create("healthy", healthy.url, 0) : null;
  return { model, raw, primaryId, backupId };
}

function chat(model: string) {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    signal: AbortSignal.timeout(8_000),
  });
}

describe("a 200 body that stalls, breaks off or is not JSON fails over to the next channel", () => {
  test.each(Object.keys(ANSWERS))("%s", async (name) => {
    const { model, raw, backupId } = await modelWith(ANSWERS[name]!, true);
    const response = await chat(model);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-channel")).toBe(backupId!);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect((await response.json()).choices[0].message.content).toBe("Hello from the loopback upstream. How can I help?");
    expect(raw.exchanges).toHaveLength(1);
    // The gateway let go of the first upstream's connection instead of leaving it open.
    await raw.exchanges[0]!.whenClosed;
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 200, channel_id: backupId });
  });
});

describe("on the only channel", () => {
  test("a body that stalls is a 504 that says it stalled, and the upstream connection is closed", async () => {
    const { model, raw } = await modelWith(ANSWERS["half the body, then silence"]!, false);
    const response = await chat(model);
    expect(response.status).toBe(504);
    expect((await response.json()).error).toEqual(stalledError(IDLE_MS));
    await raw.exchanges[0]!.whenClosed;
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 504, cost_micros: 0 });
  });

  test("an HTML page is a 502 that says the body is not JSON", async () => {
    const { model } = await modelWith(ANSWERS["an HTML page"]!, false);
    const response = await chat(model);
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toBe("Upstream failed: upstream sent a body that is not JSON");
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });

  test("a channel that keeps answering 200 with garbage cools down like one answering 5xx", async () => {
    const { model, raw } = await modelWith(ANSWERS["an HTML page"]!, false);
    // GATEWAY_BREAKER_FAILURES is 2: two failures cool the channel, the third request is not sent to it.
    expect((await chat(model)).status).toBe(502);
    expect((await chat(model)).status).toBe(502);
    const cooled = await chat(model);
    expect(cooled.status).toBe(503);
    expect(raw.exchanges).toHaveLength(2);
    expect((await onlyUsageRowOf(gw, cooled)).status).toBe(503);
  });
});

test("embeddings read their body the same way: a stall is a 504", async () => {
  const { model, raw } = await modelWith((exchange) => exchange.write(responseHead(200, { "content-type": "application/json", "content-length": "300" }) + '{"data":['), false);
  expect((await gw.admin("POST", "/v1/admin/prices", { model, mode: "embedding", input_per_million: 1 })).status).toBe(200);
  const response = await gw.fetch("/v1/embeddings", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model, input: "hello" }), signal: AbortSignal.timeout(8_000) });
  expect(response.status).toBe(504);
  // The idle limit ended it, not the overall deadline (4 s here), which would also be a 504.
  expect((await response.json()).error).toEqual(stalledError(IDLE_MS));
  await raw.exchanges[0]!.whenClosed;
  expect((await onlyUsageRowOf(gw, response)).status).toBe(504);
});
