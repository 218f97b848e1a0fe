import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startAnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { readFixture } from "../helpers/loopback-upstream.ts";
import { closedPortUrl, fixtureEvents, startOpenAiUpstream, summarizeStreamFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";

/**
 * What the caller sees when the upstream fails: error mapping (spec 7), failover across
 * channels by priority, connection failures, cut-off streams, and the usage rows of each.
 */

let gw: TestGateway;
let client: OpenAI;
const upstreams: OpenAiUpstream[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  client = new OpenAI({ baseURL: gw.url + "/v1", apiKey: gw.demoKey, maxRetries: 0, timeout: 10_000 });
});
afterAll(async () => {
  await gw.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

async function upstream(): Promise<OpenAiUpstream> {
  const up = await startOpenAiUpstream();
  upstreams.push(up);
  return up;
}

let modelCounter = 0;
/** A model name no other test uses, so each test's channels are its own. */
const freshModel = () => `err-model-${++modelCounter}`;

async function channel(name: string, baseUrl: string, model: string, priority = 0): Promise<string> {
  const created = await gw.admin("POST", "/v1/admin/channels", {
    name,
    type: "openai",
    base_url: baseUrl,
    api_key: "upstream-secret",
    models: [model],
    priority,
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

function post(body: unknown, signal: AbortSignal = AbortSignal.timeout(5_000)) {
  return gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body), signal });
}

async function usageRowOf(requestId: string) {
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
  const rows = listed.body.usage.filter((r: any) => r.request_id === requestId);
  expect(rows).toHaveLength(1);
  return rows[0];
}

/** The usage rows of a model (each test's model is its own). */
async function usageRowsOfModel(model: string) {
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
  return listed.body.usage.filter((r: any) => r.model === model);
}

/** The spec 7 error shape, exactly these keys, and OpenAI's `param` when the upstream named one. */
function expectErrorShape(body: any, status: number, type?: string, param?: string) {
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(param ? ["code", "message", "param", "type"] : ["code", "message", "type"]);
  expect(body.error.param).toBe(param);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.code).toBe(status);
  if (type) expect(body.error.type).toBe(type);
}

describe("upstream error statuses", () => {
  test("upstream 400 -> caller 400 with the spec error shape, no failover", async () => {
    const model = freshModel();
    const bad = await upstream();
    const spare = await upstream();
    bad.setBehavior({ status: 400 });
    await channel("rejects", bad.url, model, 10);
    await channel("spare", spare.url, model, 0);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expectErrorShape(body, 400, "invalid_request_error", "messages");
    expect(body.error.message).toContain("Invalid value for 'messages'");
    expect(bad.requests).toHaveLength(1);
    expect(spare.requests).toHaveLength(0);
  });

  test("upstream 400 raises BadRequestError in the SDK", async () => {
    const model = freshModel();
    const bad = await upstream();
    bad.setBehavior({ status: 400 });
    await channel("rejects", bad.url, model);
    const error = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error.code).toBe(400);
  });

  test("upstream 413 -> caller 413 request_too_large, no failover: the SDK raises its own class for it", async () => {
    const model = freshModel();
    const bad = await upstream();
    const spare = await upstream();
    bad.setBehavior({ status: 413 });
    await channel("too-large", bad.url, model, 10);
    await channel("spare", spare.url, model, 0);
    const error = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(413);
    expect(error.error.type).toBe("request_too_large");
    expect(bad.requests).toHaveLength(1);
    expect(spare.requests).toHaveLength(0);
  });

  test("upstream 401 (the channel's key is bad) -> caller 502 upstream_error, never 401", async () => {
    const model = freshModel();
    const bad = await upstream();
    bad.setBehavior({ status: 401 });
    await channel("bad key", bad.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const body = await response.json();
    expectErrorShape(body, 502, "upstream_error");
    expect(JSON.stringify(body)).not.toContain("upstream-secret");
    const error = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).not.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(502);
  });

  test("an upstream error message that quotes the channel's key reaches the caller without it", async () => {
    // OpenAI's 401 names the key it was given ("Incorrect API key provided: ..."), and some
    // compatible servers quote the whole Authorization header, in a 401 or a 400 alike.
    for (const status of [401, 400]) {
      const model = freshModel();
      const echoing = await upstream();
      echoing.setBehavior({
        script: (request) => Response.json({ error: { message: `Incorrect API key provided: ${request.headers.authorization}`, param: `header ${request.headers.authorization}` } }, { status }),
      });
      await channel("echoing", echoing.url, model);
      const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
      expect(response.status).toBe(status === 401 ? 502 : 400);
      const body = await response.json();
      expect(echoing.requests[0]!.headers.authorization).toBe("Bearer upstream-secret");
      expect(body.error.message).toContain("Incorrect API key provided");
      expect(body.error.message).not.toContain("upstream-secret");
      // The param it named is masked as well.
      expect(JSON.stringify(body)).not.toContain("upstream-secret");
      if (status === 400) expect(body.error.param).toBe("header Bearer ****");
    }
  });

  test("upstream 401 on a stream request -> caller 502 JSON error, not an SSE 200", async () => {
    const model = freshModel();
    const bad = await upstream();
    bad.setBehavior({ status: 401 });
    await channel("bad key", bad.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }], stream: true });
    expect(response.status).toBe(502);
    expect(response.headers.get("content-type")).toContain("application/json");
    expectErrorShape(await response.json(), 502, "upstream_error");
  });

  test("upstream 429 on the only channel -> caller 429 rate_limit_error with Retry-After", async () => {
    const model = freshModel();
    const limited = await upstream();
    limited.setBehavior({ status: 429, headers: { "retry-after": "7" } });
    await channel("limited", limited.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
    expectErrorShape(await response.json(), 429, "rate_limit_error");
  });

  test("upstream 500 on the only channel -> caller 502, and a usage row with status 502", async () => {
    const model = freshModel();
    const broken = await upstream();
    broken.setBehavior({ status: 500 });
    await channel("broken", broken.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    expectErrorShape(await response.json(), 502, "upstream_error");
    const rows = await usageRowsOfModel(model);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row.endpoint).toBe("/v1/chat/completions");
    expect(row.status).toBe(502);
    expect(row.prompt_tokens).toBe(0);
    expect(row.completion_tokens).toBe(0);
  });

  test("an upstream error response still carries the x-request-id of its usage row", async () => {
    const model = freshModel();
    const broken = await upstream();
    broken.setBehavior({ status: 500 });
    await channel("broken", broken.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toStartWith("req_");
    const rows = await usageRowsOfModel(model);
    expect(rows).toHaveLength(1);
    expect(rows[0].request_id).toBe(requestId);
  });

  test("upstream 200 with a body that is not JSON -> caller 502", async () => {
    const model = freshModel();
    const garbled = await upstream();
    garbled.setBehavior({ script: () => new Response("<html>gateway page</html>", { status: 200, headers: { "content-type": "text/html" } }) });
    await channel("garbled", garbled.url, model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    expectErrorShape(await response.json(), 502, "upstream_error");
  });
});

describe("failover", () => {
  test("500 on the high-priority channel, 200 on the lower one -> served by the second, 2 attempts", async () => {
    const model = freshModel();
    const first = await upstream();
    const second = await upstream();
    first.setBehavior({ status: 500 });
    const firstId = await channel("primary", first.url, model, 10);
    const secondId = await channel("backup", second.url, model, 1);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-channel")).toBe(secondId);
    expect(response.headers.get("x-gateway-channel")).not.toBe(firstId);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    const body = await response.json();
    expect(body.choices[0].message.content).toBe("Hello from the loopback upstream. How can I help?");
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.status).toBe(200);
    expect(row.channel_id).toBe(secondId);
  });

  test("the same failover for a streamed request", async () => {
    const model = freshModel();
    const first = await upstream();
    const second = await upstream();
    first.setBehavior({ status: 503 });
    await channel("primary", first.url, model, 10);
    const secondId = await channel("backup", second.url, model, 1);
    const { data: stream, response } = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "hi" }], stream: true })
      .withResponse();
    expect(response.headers.get("x-gateway-channel")).toBe(secondId);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe(summarizeStreamFixture("openai-chat-stream.sse").text);
    expect(first.requests).toHaveLength(1);
  });

  test("connection refused on the first channel, a working second channel -> 200", async () => {
    const model = freshModel();
    const working = await upstream();
    await channel("nowhere", await closedPortUrl(), model, 10);
    const workingId = await channel("working", working.url, model, 1);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-channel")).toBe(workingId);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect((await response.json()).choices[0].message.content).toBe("Hello from the loopback upstream. How can I help?");
    expect(working.requests).toHaveLength(1);
  });

  test("a final failure says how many attempts it took, as a success does, and names no channel", async () => {
    const model = freshModel();
    const first = await upstream();
    const second = await upstream();
    first.setBehavior({ status: 500 });
    second.setBehavior({ status: 502 });
    await channel("first", first.url, model, 10);
    await channel("second", second.url, model, 1);
    const failed = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(failed.status).toBe(502);
    expect(failed.headers.get("x-gateway-attempts")).toBe("2");
    expect(failed.headers.get("x-gateway-channel")).toBeNull();

    first.setBehavior({ status: 400 });
    const refused = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-gateway-attempts")).toBe("1");
  });

  test("connection refused on the only channel -> 502 upstream_error, naming the runtime's code for it", async () => {
    const model = freshModel();
    await channel("nowhere", await closedPortUrl(), model);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const body = await response.json();
    expectErrorShape(body, 502, "upstream_error");
    expect(body.error.message).toContain("could not connect to the upstream (ECONNREFUSED)");
  });


  test("402 (the channel's account at the provider is out of credit) fails over and counts against the channel; alone, the gateway's 502", async () => {
    const model = freshModel();
    const unpaid = await upstream();
    const second = await upstream();
    unpaid.setBehavior({ status: 402, errorBody: { error: { message: "Insufficient Balance", type: "unknown_error", param: null, code: "invalid_request_error" } } });
    const unpaidId = await channel("unpaid", unpaid.url, model, 10);
    const alone = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(alone.status).toBe(502);
    expectErrorShape(await alone.json(), 502, "upstream_error");

    const secondId = await channel("paid", second.url, model, 1);
    for (let i = 0; i < 2; i++) {
      const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-gateway-channel")).toBe(secondId);
      expect(response.headers.get("x-gateway-attempts")).toBe("2");
    }
    // Three 402s in a row: the channel cools like one whose key is refused.
    const listed = await gw.admin("GET", "/v1/admin/channels");
    expect(listed.body.channels.find((c: { id: string }) => c.id === unpaidId).status).toBe("cooling");
  });

  test("429 on the first channel fails over to the second", async () => {
    const model = freshModel();
    const first = await upstream();
    const second = await upstream();
    first.setBehavior({ status: 429 });
    await channel("limited", first.url, model, 10);
    const secondId = await channel("free", second.url, model, 1);
    const response = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-channel")).toBe(secondId);
  });
});

describe("streams that end badly", () => {
  /** Parses a raw SSE body into its data strings. */
  const dataOf = (raw: string) =>
    raw
      .split("\n\n")
      .filter((e) => e.trim() !== "")
      .map((e) => e.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n"));

  const partialText = () =>
    fixtureEvents("openai-chat-stream-truncated.sse")
      .map((d) => JSON.parse(d).choices[0]?.delta?.content ?? "")
      .join("");

  test(
    "upstream body ends without finish_reason and [DONE] -> the client stream ends with an error event",
    async () => {
      const model = freshModel();
      const cut = await upstream();
      cut.setBehavior({ streamFixture: "openai-chat-stream-truncated.sse" });
      await channel("cut", cut.url, model);
      const response = await post({ model, messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
      expect(response.status).toBe(200);
      const raw = await response.text();
      const events = dataOf(raw);
      expect(events).not.toContain("[DONE]");
      const last = JSON.parse(events.at(-1)!);
      expect(last.error).toBeDefined();
      expect(last.error.type).toBe("upstream_error");
      expect(last.error.code).toBe(502);
      expect(typeof last.error.message).toBe("string");
      const text = events.slice(0, -1).map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "").join("");
      expect(text).toBe(partialText());
      expect(text.length).toBeGreaterThan(0);
      const row = await usageRowOf(response.headers.get("x-request-id")!);
      expect(row.status).toBe(502);
      expect(row.stream).toBe(true);
    },
    5_000,
  );

  test(
    "the SDK raises an APIError for the error event instead of hanging",
    async () => {
      const model = freshModel();
      const cut = await upstream();
      cut.setBehavior({ streamFixture: "openai-chat-stream-truncated.sse" });
      await channel("cut", cut.url, model);
      const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], stream: true });
      let text = "";
      const error = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      })().catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(text).toBe(partialText());
    },
    5_000,
  );

  test(
    "upstream connection dropped mid-stream -> the client stream ends with an error event",
    async () => {
      const model = freshModel();
      const cut = await upstream();
      cut.setBehavior({ streamFixture: "openai-chat-stream-truncated.sse", streamEnd: "abort" });
      await channel("dropped", cut.url, model);
      const response = await post({ model, messages: [{ role: "user", content: "hi" }], stream: true });
      expect(response.status).toBe(200);
      let raw = "";
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          raw += value;
        }
      } catch {
        // the gateway dropping the connection too is what this test catches: raw lacks the error event
      }
      const events = dataOf(raw);
      expect(events.length).toBeGreaterThan(0);
      const last = JSON.parse(events.at(-1)!);
      expect(last.error?.type).toBe("upstream_error");
      expect(last.error?.code).toBe(502);
      const row = await usageRowOf(response.headers.get("x-request-id")!);
      expect(row.status).toBe(502);
    },
    5_000,
  );

  test(
    "an error object sent mid-stream by the upstream becomes the client's error event",
    async () => {
      const model = freshModel();
      const failing = await upstream();
      const first = fixtureEvents("openai-chat-stream.sse").slice(0, 3);
      failing.setBehavior({
        script: () =>
          new Response(
            first.map((d) => `data: ${d}\n\n`).join("") + `data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}\n\n`,
            { headers: { "content-type": "text/event-stream" } },
          ),
      });
      await channel("fails mid-stream", failing.url, model);
      const response = await post({ model, messages: [{ role: "user", content: "hi" }], stream: true });
      const events = dataOf(await response.text());
      expect(events).not.toContain("[DONE]");
      expect(JSON.parse(events.at(-1)!).error.code).toBe(502);
    },
    5_000,
  );

  test(
    "the upstream deadline (GATEWAY_UPSTREAM_TIMEOUT_MS) turns a silent upstream into a 504",
    async () => {
      const slowGw = await startTestGateway({ env: { GATEWAY_UPSTREAM_TIMEOUT_MS: "200" } });
      try {
        const slow = await upstream();
        slow.setBehavior({ delayMs: 2_000 });
        const created = await slowGw.admin("POST", "/v1/admin/channels", {
          name: "slow",
          type: "openai",
          base_url: slow.url,
          api_key: "upstream-secret",
          models: ["slow-model"],
        });
        expect(created.status).toBe(201);
        const response = await slowGw.fetch("/v1/chat/completions", {
          method: "POST",
          headers: bearer(slowGw.demoKey),
          body: JSON.stringify({ model: "slow-model", messages: [{ role: "user", content: "hi" }] }),
          signal: AbortSignal.timeout(4_000),
        });
        expect(response.status).toBe(504);
        // The upstream would have answered 200 after 2 s: a 504 is the timeout's.
        expectErrorShape(await response.json(), 504, "upstream_timeout");
      } finally {
        await slowGw.close();
      }
    },
    5_000,
  );
});

describe("the wait for an upstream's headers", () => {
  /**
   * A gateway whose first-byte limit is 300 ms, with a channel whose upstream sends its
   * headers after 800 ms (first, by priority) and a prompt one behind it.
   */
  async function slowHeadsWorld(env: Record<string, string>) {
    const slowGw = await startTestGateway({ env: { GATEWAY_FIRST_BYTE_TIMEOUT_MS: "300", ...env } });
    const slow = await upstream();
    slow.setBehavior({ delayMs: 800 });
    const prompt = await upstream();
    const ids: string[] = [];
    for (const [name, up, priority] of [["slow-head", slow, 10], ["prompt-head", prompt, 0]] as const) {
      const created = await slowGw.admin("POST", "/v1/admin/channels", { name, type: "openai", base_url: up.url, api_key: "upstream-secret", models: ["head-model"], priority });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    const ask = (stream: boolean) =>
      slowGw.fetch("/v1/chat/completions", {
        method: "POST",
        headers: bearer(slowGw.demoKey),
        body: JSON.stringify({ model: "head-model", messages: [{ role: "user", content: "hi" }], stream }),
        signal: AbortSignal.timeout(4_000),
      });
    return { slowGw, slowId: ids[0]!, promptId: ids[1]!, ask };
  }

  test(
    "a stream whose headers do not come within GATEWAY_FIRST_BYTE_TIMEOUT_MS fails over to the next channel",
    async () => {
      const { slowGw, promptId, ask } = await slowHeadsWorld({});
      try {
        const response = await ask(true);
        expect(response.status).toBe(200);
        expect(response.headers.get("x-gateway-channel")).toBe(promptId);
        expect(response.headers.get("x-gateway-attempts")).toBe("2");
        expect(await response.text()).toContain("[DONE]");
      } finally {
        await slowGw.close();
      }
    },
    6_000,
  );

  test(
    "an answer read whole waits for its headers past the first-byte limit, as providers send them only when it is done",
    async () => {
      const { slowGw, slowId, ask } = await slowHeadsWorld({});
      try {
        const response = await ask(false);
        expect(response.status).toBe(200);
        expect(response.headers.get("x-gateway-channel")).toBe(slowId);
        expect(response.headers.get("x-gateway-attempts")).toBe("1");
        expect((await response.json()).choices[0].message.content).toBeString();
      } finally {
        await slowGw.close();
      }
    },
    6_000,
  );

  test(
    "GATEWAY_WHOLE_ANSWER_TIMEOUT_MS bounds that wait, and failing it fails over",
    async () => {
      const { slowGw, promptId, ask } = await slowHeadsWorld({ GATEWAY_WHOLE_ANSWER_TIMEOUT_MS: "300" });
      try {
        const response = await ask(false);
        expect(response.status).toBe(200);
        expect(response.headers.get("x-gateway-channel")).toBe(promptId);
        expect(response.headers.get("x-gateway-attempts")).toBe("2");
      } finally {
        await slowGw.close();
      }
    },
    6_000,
  );
});

describe("an upstream that answers with a redirect", () => {
  test("is not followed: the channel's key never reaches the other host; 502, or the next channel", async () => {
    const elsewhere = await startAnthropicUpstream();
    const redirecting = await startAnthropicUpstream({
      script: ({ path }) => new Response(null, { status: 307, headers: { location: `${elsewhere.url}${path}` } }),
    });
    const model = freshModel();
    const create = (name: string, url: string, priority: number) =>
      gw.admin("POST", "/v1/admin/channels", { name, type: "anthropic", base_url: url, api_key: "anthropic-channel-secret", models: [model], priority });
    await create("redirecting", redirecting.url, 10);
    const alone = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(alone.status).toBe(502);
    const body = await alone.json();
    expectErrorShape(body, 502, "upstream_error");
    expect(body.error.message).toContain("redirect");
    expect(redirecting.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);

    // A redirect says the channel is misconfigured: the next channel serves.
    const spare = await upstream();
    const spareId = (await gw.admin("POST", "/v1/admin/channels", { name: "spare", type: "openai", base_url: spare.url, api_key: "k", models: [model], priority: 0 })).body.id;
    const served = await post({ model, messages: [{ role: "user", content: "hi" }] });
    expect(served.status).toBe(200);
    expect(served.headers.get("x-gateway-channel")).toBe(spareId);
    expect(elsewhere.requests).toHaveLength(0);
    await elsewhere.close();
    await redirecting.close();
  });
});

describe("an upstream that sends its whole stream, end event included, and keeps the connection open", () => {
  /** Serves `fixture` as an event stream whose body never ends. */
  function neverClosing(fixture: string) {
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      fetch: () =>
        new Response(
          new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode(readFixture(fixture))) }),
          { headers: { "content-type": "text/event-stream" } },
        ),
    });
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.stop(true) };
  }

  test.each([
    ["openai", "openai-chat-stream.sse", "/v1"],
    ["anthropic", "anthropic-stream.sse", ""],
  ])("%s upstream: the caller's stream ends at once with [DONE], and the row says 200", async (type, fixture, path) => {
    const up = neverClosing(fixture);
    const model = freshModel();
    await gw.admin("POST", "/v1/admin/channels", { name: `open-${type}`, type, base_url: up.url + path, api_key: "k", models: [model] });
    const response = await post({ model, messages: [{ role: "user", content: "hi" }], stream: true }, AbortSignal.timeout(4_000));
    const text = await response.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(text).not.toContain('"error"');
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.status).toBe(200);
    up.close();
  });
});
