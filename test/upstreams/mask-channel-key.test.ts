import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { fixtureEvents, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { anthropicFixtureEvents, startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";

/**
 * A channel's key never reaches a caller through an upstream's error, whichever way the error
 * comes: an error status's body (see also test/chat/upstream-errors.test.ts), a stream's first
 * event, an error event after the answer began, an Anthropic upstream's own error event relayed
 * to an Anthropic caller, and a key the provider quoted only in part.
 */

const CHANNEL_KEY = "sk-live-Qm8vT2xR9pLw4KzN7bYc";

let gw: TestGateway;
const upstreams: Array<OpenAiUpstream | AnthropicUpstream> = [];
let models = 0;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

/** A model served by one channel of `type` at `url` with CHANNEL_KEY. */
async function channelModel(type: "openai" | "anthropic", url: string): Promise<string> {
  const model = `key-echo-${++models}`;
  const created = await gw.admin("POST", "/v1/admin/channels", { name: model, type, base_url: url, api_key: CHANNEL_KEY, models: [model] });
  expect(created.status).toBe(201);
  return model;
}

/** An OpenAI-compatible channel answering every call with `answer`. */
async function openAiModel(answer: (authorization: string) => Response): Promise<string> {
  const upstream = await startOpenAiUpstream();
  upstreams.push(upstream);
  upstream.setBehavior({ script: (request) => answer(request.headers.authorization!) });
  return channelModel("openai", upstream.url);
}

const sse = (events: string[]) => new Response(events.map((data) => `data: ${data}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });

function chat(model: string, stream: boolean) {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
  });
}

/** What a caller could piece the key together from: the key, its secret part, and its last characters. */
function expectNoPieceOfKey(text: string): void {
  expect(text).not.toContain(CHANNEL_KEY);
  expect(text).not.toContain(CHANNEL_KEY.slice(8, 14));
  expect(text).not.toContain(CHANNEL_KEY.slice(-4));
}

describe("a stream's error event that quotes the channel's key", () => {
  test("as the first event: the caller's 502 keeps the upstream's words, not the key", async () => {
    const model = await openAiModel((authorization) => sse([JSON.stringify({ error: { message: `Incorrect API key provided: ${authorization}`, code: 401 } })]));
    const response = await chat(model, true);
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).toContain("Incorrect API key provided");
    expectNoPieceOfKey(text);
  });

  test("after the answer began: the caller's error event keeps the upstream's words, not the key", async () => {
    const [first, second] = fixtureEvents("openai-chat-stream.sse");
    const model = await openAiModel((authorization) => sse([first!, second!, JSON.stringify({ error: { message: `Key ${authorization} was revoked` } })]));
    const response = await chat(model, true);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("Hello");
    expect(text).toContain("was revoked");
    expectNoPieceOfKey(text);
  });

  test("an Anthropic upstream's own error event, relayed to an Anthropic caller, is still its event without the key", async () => {
    const upstream = await startAnthropicUpstream();
    upstreams.push(upstream);
    const began = anthropicFixtureEvents("anthropic-stream.sse").filter(({ event }) => event !== "message_stop" && event !== "message_delta" && event !== "content_block_stop");
    upstream.setBehavior({
      script: (request) => {
        const failure = { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${request.headers["x-api-key"]}` } };
        const events = [...began, { event: "error", data: failure }].map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
      },
    });
    const model = await channelModel("anthropic", upstream.url);
    const response = await gw.fetch("/v1/messages", {
      method: "POST",
      headers: { ...bearer(gw.demoKey), "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const errorEvent = text.split("\n\n").find((event) => event.startsWith("event: error"));
    expect(JSON.parse(errorEvent!.split("data: ")[1]!)).toEqual({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key ****" } });
    expectNoPieceOfKey(text);
  });
});

test("a 401 that quotes the key in part, as OpenAI's does, shows the caller no piece of it", async () => {
  const quoted = `${CHANNEL_KEY.slice(0, 12)}${"*".repeat(12)}${CHANNEL_KEY.slice(-4)}`;
  const model = await openAiModel(() =>
    Response.json(
      { error: { message: `Incorrect API key provided: ${quoted}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: "invalid_request_error", code: "invalid_api_key" } },
      { status: 401 },
    ),
  );
  for (const stream of [false, true]) {
    const response = await chat(model, stream);
    expect(response.status).toBe(502);
    const body = await response.json();
    expect(body.error.message).toBe("Upstream failed: Incorrect API key provided: **** You can find your API key at https://platform.openai.com/account/api-keys.");
    expectNoPieceOfKey(JSON.stringify(body));
  }
});
