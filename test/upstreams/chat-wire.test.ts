import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { readFixture } from "../helpers/loopback-upstream.ts";
import { startOpenAiUpstream, summarizeStreamFixture } from "../helpers/openai-upstream.ts";
import { startAnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { startGeminiUpstream } from "../helpers/gemini-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";

/**
 * A streamed chat request whose upstream answers 2xx with a whole JSON body (it ignored
 * `stream`) or an HTML page: the gateway learns it from the Content-Type before decoding
 * anything, so it is a protocol failure (502, or the next channel), not a started stream
 * that ends in an error event. Other labels are still read as SSE.
 */

let gw: TestGateway;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.close();
  await Promise.all(closers.map((close) => close()));
});

/** Each upstream kind, its base path and its whole (non-streamed) answer. */
const KINDS = [
  { type: "openai", start: startOpenAiUpstream, path: "/v1", completion: "openai-chat-completion.json" },
  { type: "anthropic", start: startAnthropicUpstream, path: "", completion: "anthropic-message.json" },
  { type: "gemini", start: startGeminiUpstream, path: "", completion: "gemini-generate-content.json" },
] as const;

let modelCounter = 0;

/** A fresh model whose one channel (of `type`) answers every request with `answer`. */
async function modelAnswering(kind: (typeof KINDS)[number], answer: () => Response, priority = 10): Promise<string> {
  const model = `chat-wire-${++modelCounter}`;
  const upstream = await kind.start({ script: answer });
  closers.push(() => upstream.close());
  const created = await gw.admin("POST", "/v1/admin/channels", { name: kind.type, type: kind.type, base_url: upstream.url + kind.path, api_key: "k", models: [model], priority });
  expect(created.status).toBe(201);
  return model;
}

function streamChat(model: string) {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], stream: true }),
    signal: AbortSignal.timeout(5_000),
  });
}

describe.each(KINDS)("$type upstream, streamed request", (kind) => {
  test("answered with its whole JSON body: a 502 JSON error naming what came", async () => {
    const model = await modelAnswering(kind, () => new Response(readFixture(kind.completion), { headers: { "content-type": "application/json" } }));
    const response = await streamChat(model);
    expect(response.status).toBe(502);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect((await response.json()).error).toEqual({
      message: "Upstream failed: upstream answered application/json instead of an event stream",
      type: "upstream_error",
      code: 502,
    });
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
  });

  test("answered with an HTML page: a 502", async () => {
    const model = await modelAnswering(kind, () => new Response("<html>Bad Gateway</html>", { headers: { "content-type": "text/html; charset=utf-8" } }));
    const response = await streamChat(model);
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toBe("Upstream failed: upstream answered text/html instead of an event stream");
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });
});

test("the next channel serves a stream the first answered with JSON", async () => {
  const [openai] = KINDS;
  const model = await modelAnswering(openai, () => Response.json(JSON.parse(readFixture(openai.completion))));
  const healthy = await startOpenAiUpstream();
  closers.push(() => healthy.close());
  const created = await gw.admin("POST", "/v1/admin/channels", { name: "healthy", type: "openai", base_url: healthy.url, api_key: "k", models: [model], priority: 0 });
  const response = await streamChat(model);
  expect(response.status).toBe(200);
  expect(response.headers.get("x-gateway-attempts")).toBe("2");
  const text = await response.text();
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  expect((await onlyUsageRowOf(gw, response)).channel_id).toBe(created.body.id);
});

test("an event stream labelled text/plain is still read as one", async () => {
  const model = await modelAnswering(KINDS[0], () => new Response(readFixture("openai-chat-stream.sse"), { headers: { "content-type": "text/plain" } }));
  const response = await streamChat(model);
  expect(response.status).toBe(200);
  let text = "";
  for (const line of (await response.text()).split("\n")) {
    if (line.startsWith("data: {")) text += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? "";
  }
  expect(text).toBe(summarizeStreamFixture("openai-chat-stream.sse").text);
  expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
});

describe("a whole answer with nothing in it is a 502, translated or passed through", () => {
  /** The caller's request for `model`: OpenAI's chat completions, or the upstream's own format. */
  const CALLERS = {
    openai: (model: string) => ({ path: "/v1/chat/completions", body: { model, messages: [{ role: "user", content: "hi" }] } }),
    anthropic: (model: string) => ({ path: "/v1/messages", body: { model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] } }),
    gemini: (model: string) => ({ path: `/v1beta/models/${model}:generateContent`, body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] } }),
  };
  const [openai, , gemini] = KINDS;

  function ask(caller: keyof typeof CALLERS, model: string) {
    const { path, body } = CALLERS[caller](model);
    return gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) });
  }

  test.each([
    ["gemini, no candidates and no promptFeedback", "gemini", gemini, { modelVersion: "gemini-2.0-flash" }],
    ["gemini, no candidates and no promptFeedback", "openai", gemini, { modelVersion: "gemini-2.0-flash" }],
    ["gemini, candidates: []", "gemini", gemini, { candidates: [], usageMetadata: { promptTokenCount: 2 } }],
    ["gemini, candidates: []", "openai", gemini, { candidates: [], usageMetadata: { promptTokenCount: 2 } }],
    ["gemini, no candidates and a promptFeedback that blocked nothing", "gemini", gemini, { promptFeedback: { safetyRatings: [] }, usageMetadata: { promptTokenCount: 2 } }],
    ["openai, choices: []", "openai", openai, { id: "chatcmpl-1", object: "chat.completion", choices: [], usage: { prompt_tokens: 2, completion_tokens: 0 } }],
    ["openai, choices: []", "anthropic", openai, { id: "chatcmpl-1", object: "chat.completion", choices: [], usage: { prompt_tokens: 2, completion_tokens: 0 } }],
  ] as const)("%s; caller: %s", async (_, caller, kind, body) => {
    const model = await modelAnswering(kind, () => Response.json(body));
    const response = await ask(caller, model);
    expect(response.status).toBe(502);
    expect(JSON.stringify(await response.json())).toContain("upstream sent a chat response without an answer");
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
  });

  test("a prompt Gemini blocked (promptFeedback.blockReason, no candidates) still reaches a gemini caller as sent", async () => {
    const blocked = { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } };
    const model = await modelAnswering(gemini, () => Response.json(blocked));
    const response = await ask("gemini", model);
    expect(response.status).toBe(200);
    expect((await response.json()).promptFeedback).toEqual({ blockReason: "PROHIBITED_CONTENT" });
    expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
  });
});

describe("a Gemini answer that ends in a function call the model could not write", () => {
  const gemini = KINDS[2];
  const MALFORMED = {
    candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL", index: 0, finishMessage: "Malformed function call: get_weather(city=" }],
    usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
    modelVersion: "gemini-2.0-flash",
  };
  const sse = (...chunks: object[]) => new Response(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join(""), { headers: { "content-type": "text/event-stream" } });
  const chat = (model: string, stream = false) =>
    gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model, messages: [{ role: "user", content: "weather in Paris?" }], stream }),
      signal: AbortSignal.timeout(5_000),
    });

  test("is a 502 for an openai caller, not an empty answer that stopped, and leaves the channel in rotation", async () => {
    let calls = 0;
    const model = await modelAnswering(gemini, () => (calls++, Response.json(MALFORMED)));
    for (let i = 1; i <= 4; i++) {
      const response = await chat(model);
      expect(response.status).toBe(502);
      expect((await response.json()).error).toEqual({
        message: "Upstream failed: the model began a function call it could not complete (Gemini's MALFORMED_FUNCTION_CALL); a retry may succeed",
        type: "upstream_error",
        code: 502,
      });
      expect(response.headers.get("x-gateway-attempts")).toBe("1");
      expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
      // Past the breaker's 3 failures in a row, the channel still takes every request.
      expect(calls).toBe(i);
    }
  });

  test("moves on to the model's next channel, whole or streamed before any byte, and still cools no channel", async () => {
    let geminiCalls = 0;
    const model = await modelAnswering(gemini, () => (geminiCalls++, geminiCalls % 2 ? Response.json(MALFORMED) : sse(MALFORMED)));
    const openai = await startOpenAiUpstream();
    closers.push(() => openai.close());
    const second = await gw.admin("POST", "/v1/admin/channels", { name: "second", type: "openai", base_url: openai.url, api_key: "k", models: [model], priority: 5 });
    expect(second.status).toBe(201);
    const secondId = second.body.id;
    for (let i = 1; i <= 4; i++) {
      const response = await chat(model, i % 2 === 0);
      expect({ i, status: response.status, attempts: response.headers.get("x-gateway-attempts"), body: response.status === 200 ? "" : await response.text() }).toEqual({ i, status: 200, attempts: "2", body: "" });
      expect(response.headers.get("x-gateway-channel")).toBe(secondId);
      expect(await response.text()).toContain(i % 2 === 0 ? "data: [DONE]" : '"finish_reason"');
      // The gemini channel, first by priority, is still tried every time: past the breaker's 3 failures in a row.
      expect(geminiCalls).toBe(i);
    }
  });

  test("streamed, it is the same 502 before any byte; after text, the stream ends with an error", async () => {
    const model = await modelAnswering(gemini, () => sse(MALFORMED));
    const held = await chat(model, true);
    expect(held.status).toBe(502);
    expect((await held.json()).error.message).toContain("MALFORMED_FUNCTION_CALL");

    const afterText = await modelAnswering(gemini, () => sse({ candidates: [{ content: { role: "model", parts: [{ text: "Let me check." }] }, index: 0 }] }, MALFORMED));
    const response = await chat(afterText, true);
    expect(response.status).toBe(200);
    const events = (await response.text()).split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)));
    expect(events.map((event) => event.choices?.[0]?.delta?.content ?? "").join("")).toBe("Let me check.");
    expect(events.at(-1).error.message).toContain("MALFORMED_FUNCTION_CALL");
    expect(events.some((event) => event.choices?.[0]?.finish_reason === "stop")).toBe(false);
  });

  /** An anthropic or a responses caller's request for `model`, whole or streamed. */
  const CALLERS = {
    anthropic: (model: string, stream: boolean) => ({ path: "/v1/messages", body: { model, max_tokens: 50, messages: [{ role: "user", content: "weather in Paris?" }], stream } }),
    responses: (model: string, stream: boolean) => ({ path: "/v1/responses", body: { model, input: "weather in Paris?", store: false, stream } }),
  };
  const ask = (caller: keyof typeof CALLERS, model: string, stream = false) => {
    const { path, body } = CALLERS[caller](model, stream);
    return gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) });
  };
  const LET_ME_CHECK = { candidates: [{ content: { role: "model", parts: [{ text: "Let me check." }] }, index: 0 }] };
  const MALFORMED_AFTER_TEXT = { ...MALFORMED, usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21 } };
  /** The events of an SSE body: each `data:` line's JSON with the name of its `event:` line, if any. */
  const eventsOf = (text: string) =>
    text.split("\n\n").filter((block) => block.includes("data: {")).map((block) => ({
      name: /^event: (.*)$/m.exec(block)?.[1],
      data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!),
    }));

  test.each(["anthropic", "responses"] as const)("is the same 502 for the %s caller, whole or streamed before any byte, in its format's error shape, and cools no channel", async (caller) => {
    let calls = 0;
    const whole = await modelAnswering(gemini, () => (calls++, Response.json(MALFORMED)));
    const streamed = await modelAnswering(gemini, () => (calls++, sse(MALFORMED)));
    for (let i = 1; i <= 8; i++) {
      const response = await ask(caller, i % 2 ? whole : streamed, i % 2 === 0);
      expect(calls).toBe(i);
      expect(response.status).toBe(502);
      expect(response.headers.get("x-gateway-attempts")).toBe("1");
      expect(response.headers.get("content-type")).toContain("application/json");
      const body = await response.json();
      expect(body.error).toEqual({
        message: "Upstream failed: the model began a function call it could not complete (Gemini's MALFORMED_FUNCTION_CALL); a retry may succeed",
        type: "upstream_error",
        code: 502,
      });
      if (caller === "anthropic") expect(body.type).toBe("error");
      expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
    }
  });

  test("after text, an anthropic caller's stream ends with an api_error event and no stop, its row a 502 billed by the usage Gemini reported", async () => {
    const model = await modelAnswering(gemini, () => sse(LET_ME_CHECK, MALFORMED_AFTER_TEXT));
    const response = await ask("anthropic", model, true);
    expect(response.status).toBe(200);
    const events = eventsOf(await response.text());
    expect(events.filter((event) => event.name === "content_block_delta").map((event) => event.data.delta.text).join("")).toBe("Let me check.");
    expect(events.at(-1)!.name).toBe("error");
    expect(events.at(-1)!.data.error).toMatchObject({ type: "api_error" });
    expect(events.at(-1)!.data.error.message).toContain("MALFORMED_FUNCTION_CALL");
    expect(events.some((event) => event.name === "message_stop" || event.data.delta?.stop_reason)).toBe(false);
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, prompt_tokens: 12, completion_tokens: 9 });
  });

  test("after text, a responses caller's stream ends with an error event and the Response failed, never completed", async () => {
    const model = await modelAnswering(gemini, () => sse(LET_ME_CHECK, MALFORMED_AFTER_TEXT));
    const response = await ask("responses", model, true);
    expect(response.status).toBe(200);
    const events = eventsOf(await response.text());
    expect(events.filter((event) => event.name === "response.output_text.delta").map((event) => event.data.delta).join("")).toBe("Let me check.");
    expect(events.slice(-2).map((event) => event.name)).toEqual(["error", "response.failed"]);
    expect(events.at(-2)!.data.message).toContain("MALFORMED_FUNCTION_CALL");
    expect(events.at(-1)!.data.response.status).toBe("failed");
    expect(events.some((event) => event.name === "response.completed")).toBe(false);
    expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, prompt_tokens: 12, completion_tokens: 9 });
  });

  test("streamed to a gemini caller, it is relayed as sent, one candidate or several (candidateCount)", async () => {
    const two = {
      candidates: [
        { content: { role: "model", parts: [{ text: "Sunny." }] }, finishReason: "STOP", index: 0 },
        { finishReason: "UNEXPECTED_TOOL_CALL", index: 1 },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 2, totalTokenCount: 14 },
    };
    for (const [sent, candidateCount] of [[MALFORMED, 1], [two, 2]] as const) {
      const model = await modelAnswering(gemini, () => sse(sent));
      const response = await gw.fetch(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
        method: "POST",
        headers: bearer(gw.demoKey),
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "weather in Paris?" }] }], generationConfig: { candidateCount } }),
        signal: AbortSignal.timeout(5_000),
      });
      expect(response.status).toBe(200);
      const events = eventsOf(await response.text());
      expect(events.map((event) => event.data.candidates)).toEqual([sent.candidates]);
      expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
    }
  });

  test("reaches a gemini caller as Gemini sent it", async () => {
    const model = await modelAnswering(gemini, () => Response.json(MALFORMED));
    const response = await gw.fetch(`/v1beta/models/${model}:generateContent`, {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "weather in Paris?" }] }] }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).candidates).toEqual(MALFORMED.candidates);
  });
});
