import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";

/**
 * The official `openai` SDK against the built-in `mock` channel (demo-chat): spec 4.1, 4.4, 7
 * as a drop-in client sees them.
 */

let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startTestGateway();
  client = new OpenAI({ baseURL: gw.url + "/v1", apiKey: gw.demoKey, maxRetries: 0, timeout: 10_000 });
});
afterAll(() => gw.close());

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" } },
      required: ["city", "days"],
    },
  },
};

describe("mock channel through the openai SDK", () => {
  test("chat.completions.create: content, finish_reason, usage", async () => {
    const completion = await client.chat.completions.create({
      model: "demo-chat",
      messages: [{ role: "user", content: "Hello gateway" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("demo-chat");
    expect(typeof completion.id).toBe("string");
    expect(completion.id.length).toBeGreaterThan(0);
    expect(Number.isInteger(completion.created)).toBe(true);
    expect(completion.choices).toHaveLength(1);
    const choice = completion.choices[0]!;
    expect(choice.index).toBe(0);
    expect(choice.message.role).toBe("assistant");
    expect(choice.message.content).toBe("This is a mock reply from the gateway. You said: Hello gateway");
    expect(choice.finish_reason).toBe("stop");
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  test("max_tokens limits the mock reply and finish_reason becomes length", async () => {
    const completion = await client.chat.completions.create({
      model: "demo-chat",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 3,
    });
    expect(completion.choices[0]!.message.content).toBe("This is a");
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(completion.usage!.completion_tokens).toBe(3);
  });

  test("stream: chunks reassemble the same text as the plain reply; usage chunk last when asked", async () => {
    const plain = await client.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: "stream me please" }] });
    const stream = await client.chat.completions.create({
      model: "demo-chat",
      messages: [{ role: "user", content: "stream me please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.model).toBe("demo-chat");
      expect(chunk.id).toBe(chunks[0]!.id);
    }
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe(plain.choices[0]!.message.content!);
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null);
    expect(finishes).toEqual(["stop"]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toBeDefined();
    expect(last.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens);
    expect(last.usage!.completion_tokens).toBe(plain.usage!.completion_tokens);
    expect(last.usage!.total_tokens).toBe(plain.usage!.total_tokens);
    // usage appears only in the final chunk
    expect(chunks.slice(0, -1).every((c) => !c.usage)).toBe(true);
  });

  test("stream without include_usage has no usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "demo-chat",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => !c.usage)).toBe(true);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
  });

  test("raw SSE: content-type event-stream, every event a data line, ends with data: [DONE]", async () => {
    const response = await gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "raw" }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const raw = await response.text();
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = raw.split("\n\n").filter((e) => e !== "");
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(events.filter((e) => e === "data: [DONE]")).toHaveLength(1);
    const usageChunk = JSON.parse(events.at(-2)!.slice(6));
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.total_tokens).toBe(usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);
  });

  test("tools: non-streaming response carries a tool call with name and JSON arguments", async () => {
    const completion = await client.chat.completions.create({
      model: "demo-chat",
      messages: [{ role: "user", content: "Weather in Paris for 2 days?" }],
      tools: [weatherTool],
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe("function");
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.id.length).toBeGreaterThan(0);
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "mock", days: 1 });
  });

  test("tools: streamed tool-call deltas reassemble through the SDK's stream helper", async () => {
    const runner = client.chat.completions.stream({
      model: "demo-chat",
      messages: [{ role: "user", content: "Weather in Paris for 2 days?" }],
      tools: [weatherTool],
    });
    const final = await runner.finalChatCompletion();
    const choice = final.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "mock", days: 1 });
  });

  test("a tool result in the conversation gets a text answer", async () => {
    const completion = await client.chat.completions.create({
      model: "demo-chat",
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris","days":1}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "sunny, 21C" },
      ],
      tools: [weatherTool],
    });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.choices[0]!.message.content).toContain("sunny, 21C");
  });

  test("models.list() lists the demo models", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      expect(model.object).toBe("model");
      expect(Number.isInteger(model.created)).toBe(true);
      expect(typeof model.owned_by).toBe("string");
      ids.push(model.id);
    }
    expect(ids).toContain("demo-chat");
    expect(ids).toContain("demo-chat-mini");
  });
});

describe("errors through the openai SDK (spec 7)", () => {
  test("a bad key raises AuthenticationError (401) with the spec error shape", async () => {
    const bad = new OpenAI({ baseURL: gw.url + "/v1", apiKey: "sk-gw-not-a-real-key-000000000000000000000000", maxRetries: 0 });
    const error = await bad.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.status).toBe(401);
    expect(typeof error.error.message).toBe("string");
    expect(error.error.type).toBe("authentication_error");
    expect(error.error.code).toBe(401);
  });

  test("a bad key on models.list() raises AuthenticationError", async () => {
    const bad = new OpenAI({ baseURL: gw.url + "/v1", apiKey: "wrong", maxRetries: 0 });
    const error = await bad.models.list().catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  test("temperature 5 raises BadRequestError (400)", async () => {
    const error = await client.chat.completions
      .create({ model: "demo-chat", messages: [{ role: "user", content: "hi" }], temperature: 5 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.code).toBe(400);
    expect(error.error.message).toContain("temperature");
  });

  test("temperature 5 on a stream request is a 400 before any SSE is sent", async () => {
    const error = await client.chat.completions
      .create({ model: "demo-chat", messages: [{ role: "user", content: "hi" }], temperature: 5, stream: true })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  test("more than 4 stop sequences raises BadRequestError", async () => {
    const error = await client.chat.completions
      .create({ model: "demo-chat", messages: [{ role: "user", content: "hi" }], stop: ["a", "b", "c", "d", "e"] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  test("an unknown model raises NotFoundError (404)", async () => {
    const error = await client.chat.completions
      .create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.status).toBe(404);
    expect(error.error.type).toBe("not_found_error");
    expect(error.error.code).toBe(404);
  });

  test("malformed JSON is a 400 with the spec error shape", async () => {
    const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: '{"model":' });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toEqual({ error: { message: expect.any(String), type: expect.any(String), code: 400 } });
  });

  test("a missing messages field is a 400", async () => {
    const response = await gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model: "demo-chat" }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe(400);
  });
});
