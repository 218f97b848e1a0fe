import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, summarizeStreamFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";

/**
 * The official `openai` SDK against an `openai` channel whose upstream is a loopback
 * OpenAI-compatible server replaying recorded fixtures. Checks what the caller gets and
 * what the upstream receives.
 */

let gw: TestGateway;
let up: OpenAiUpstream;
let client: OpenAI;
let channelId: string;

const PLAIN = jsonFixture("openai-chat-completion.json");
const PLAIN_TOOLS = jsonFixture("openai-chat-completion-tools.json");
const STREAM = summarizeStreamFixture("openai-chat-stream.sse");
const TOOL_STREAM = summarizeStreamFixture("openai-chat-tool-stream.sse");

beforeAll(async () => {
  up = await startOpenAiUpstream();
  gw = await startTestGateway();
  const created = await gw.admin("POST", "/v1/admin/channels", {
    name: "loopback openai",
    type: "openai",
    base_url: up.url,
    api_key: "upstream-secret",
    models: ["up-model"],
    model_map: { alias: "up-model" },
  });
  expect(created.status).toBe(201);
  channelId = created.body.id;
  client = new OpenAI({ baseURL: gw.url + "/v1", apiKey: gw.demoKey, maxRetries: 0, timeout: 10_000 });
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.setBehavior({});
  up.reset();
});

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather for a location",
    parameters: { type: "object", properties: { location: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["location"] },
  },
};
const timeTool = {
  type: "function" as const,
  function: { name: "get_time", parameters: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] } },
};

/** Reads a usage row by the request id the gateway answered with. */
async function usageRowOf(requestId: string) {
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
  expect(listed.status).toBe(200);
  const rows = listed.body.usage.filter((r: any) => r.request_id === requestId);
  expect(rows).toHaveLength(1);
  return rows[0];
}

describe("plain completions", () => {
  test("content, finish_reason and the upstream's usage passed through exactly", async () => {
    const completion = await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "Hi there" }] });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("up-model");
    expect(completion.choices[0]!.message.role).toBe("assistant");
    expect(completion.choices[0]!.message.content).toBe(PLAIN.choices[0].message.content);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage!.prompt_tokens).toBe(PLAIN.usage.prompt_tokens);
    expect(completion.usage!.completion_tokens).toBe(PLAIN.usage.completion_tokens);
    expect(completion.usage!.total_tokens).toBe(PLAIN.usage.total_tokens);
    expect(up.requests).toHaveLength(1);
  });

  test("the alias is mapped to up-model upstream, and the caller sees the name it asked for", async () => {
    const completion = await client.chat.completions.create({ model: "alias", messages: [{ role: "user", content: "Hi" }] });
    expect(completion.model).toBe("alias");
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.path).toBe("/v1/chat/completions");
    expect(up.requests[0]!.body.model).toBe("up-model");
  });

  test("upstream gets Authorization: Bearer upstream-secret, never the caller's key", async () => {
    await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "Hi" }] });
    const received = up.requests[0]!;
    expect(received.headers.authorization).toBe("Bearer upstream-secret");
    for (const value of Object.values(received.headers)) expect(value).not.toContain(gw.demoKey);
    expect(received.rawBody).not.toContain(gw.demoKey);
  });

  test("Variant A defaults are filled when the caller omits them", async () => {
    await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "Hi" }] });
    const body = up.requests[0]!.body;
    expect(body.temperature).toBe(0.7);
    expect(body.max_tokens).toBe(4096);
    expect(body.top_p).toBe(1);
    expect(body.stream).toBeUndefined();
  });

  test("the caller's own values are kept", async () => {
    await client.chat.completions.create({
      model: "up-model",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.2,
      max_tokens: 50,
      top_p: 0.5,
      stop: ["END"],
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    });
    const body = up.requests[0]!.body;
    expect(body.temperature).toBe(0.2);
    expect(body.max_tokens).toBe(50);
    expect(body.top_p).toBe(0.5);
    expect(body.stop).toEqual(["END"]);
    expect(body.frequency_penalty).toBe(0.5);
    expect(body.presence_penalty).toBe(-0.5);
  });

  test("temperature 0 is kept as 0, not replaced by the default", async () => {
    await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "Hi" }], temperature: 0 });
    expect(up.requests[0]!.body.temperature).toBe(0);
  });

  test("a parameter sent as null gets Variant A's default upstream, as one left out does", async () => {
    const response = await gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model: "up-model", messages: [{ role: "user", content: "Hi" }], temperature: null, max_tokens: null, top_p: null, seed: null }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const body = up.requests[0]!.body;
    expect({ temperature: body.temperature, max_tokens: body.max_tokens, top_p: body.top_p }).toEqual({ temperature: 0.7, max_tokens: 4096, top_p: 1 });
    expect("seed" in body).toBe(false);
  });

  test("the messages reach the upstream in order with their roles", async () => {
    await client.chat.completions.create({
      model: "up-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "One" },
        { role: "assistant", content: "Two" },
        { role: "user", content: "Three" },
      ],
    });
    expect(up.requests[0]!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "One" },
      { role: "assistant", content: "Two" },
      { role: "user", content: "Three" },
    ]);
  });

  test("response headers name the serving channel and one attempt", async () => {
    const { response } = await client.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(response.headers.get("x-gateway-channel")).toBe(channelId);
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
  });
});

describe("streaming", () => {
  test("chunks reassemble the fixture's text; the last chunk carries the upstream usage", async () => {
    const stream = await client.chat.completions.create({
      model: "up-model",
      messages: [{ role: "user", content: "Stream please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe(STREAM.text);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "up-model")).toBe(true);
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null);
    expect(finishes).toEqual(["stop"]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens).toBe(STREAM.usage!.prompt_tokens);
    expect(last.usage!.completion_tokens).toBe(STREAM.usage!.completion_tokens);
    expect(last.usage!.total_tokens).toBe(STREAM.usage!.total_tokens);
  });

  test("upstream is asked to stream with stream_options.include_usage even when the caller did not ask", async () => {
    const stream = await client.chat.completions.create({ model: "alias", messages: [{ role: "user", content: "Stream" }], stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => !c.usage)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe(STREAM.text);
    const body = up.requests[0]!.body;
    expect(body.model).toBe("up-model");
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.temperature).toBe(0.7);
    expect(body.max_tokens).toBe(4096);
    expect(body.top_p).toBe(1);
    expect(up.requests[0]!.headers.authorization).toBe("Bearer upstream-secret");
  });

  test("raw SSE ends with data: [DONE], once, and multi-byte text survives an upstream split every 3 bytes", async () => {
    up.setBehavior({ byteChunkSize: 3 });
    const response = await gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model: "up-model", messages: [{ role: "user", content: "raw" }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    expect(response.headers.get("x-gateway-channel")).toBe(channelId);
    const raw = await response.text();
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(raw.split("data: [DONE]").length).toBe(2);
    const events = raw.split("\n\n").filter((e) => e !== "" && e !== "data: [DONE]");
    const chunks = events.map((e) => JSON.parse(e.slice("data: ".length)));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe(STREAM.text);
    expect(STREAM.text).toContain("世界");
    expect(STREAM.text).toContain("🎉");
    // Native passthrough: the upstream's usage chunk as it came, details included.
    expect(chunks.at(-1).usage).toEqual(STREAM.usage);
  });

  test("the SDK stream helper's finalChatCompletion matches the fixture", async () => {
    const final = await client.chat.completions
      .stream({ model: "up-model", messages: [{ role: "user", content: "Stream" }], stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe(STREAM.text);
    expect(final.choices[0]!.finish_reason).toBe("stop");
    expect(final.usage?.completion_tokens).toBe(STREAM.usage!.completion_tokens);
  });
});

describe("tools", () => {
  test("non-streaming: tool_calls with name and arguments; tools reach the upstream", async () => {
    const completion = await client.chat.completions.create({
      model: "up-model",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [weatherTool],
      tool_choice: "auto",
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    const expected = PLAIN_TOOLS.choices[0].message.tool_calls[0];
    expect(call.id).toBe(expected.id);
    expect(call.function.name).toBe("get_weather");
    expect(call.function.arguments).toBe(expected.function.arguments);
    expect(JSON.parse(call.function.arguments)).toEqual({ location: "Paris, France", unit: "celsius" });
    expect(completion.usage!.prompt_tokens).toBe(PLAIN_TOOLS.usage.prompt_tokens);

    const body = up.requests[0]!.body;
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].type).toBe("function");
    expect(body.tools[0].function.name).toBe("get_weather");
    expect(body.tools[0].function.parameters).toEqual(weatherTool.function.parameters);
    expect(body.tool_choice).toBe("auto");
  });

  test("streaming: two parallel tool calls reassemble through finalChatCompletion()", async () => {
    const final = await client.chat.completions
      .stream({ model: "up-model", messages: [{ role: "user", content: "Weather and time in Paris?" }], tools: [weatherTool, timeTool] })
      .finalChatCompletion();
    const choice = final.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    const calls = choice.message.tool_calls!.map((c) => {
      if (c.type !== "function") throw new Error("not a function call");
      return { id: c.id, name: c.function.name, arguments: c.function.arguments };
    });
    expect(calls).toEqual(TOOL_STREAM.toolCalls);
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ location: "Paris, France", unit: "celsius" });
    expect(JSON.parse(calls[1]!.arguments)).toEqual({ timezone: "Europe/Paris" });
  });

  test("streaming: manual accumulation of tool_calls deltas by index", async () => {
    const stream = await client.chat.completions.create({
      model: "up-model",
      messages: [{ role: "user", content: "Weather and time in Paris?" }],
      tools: [weatherTool, timeTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls: { id: string; name: string; arguments: string }[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        for (const delta of choice.delta.tool_calls ?? []) {
          const slot = (calls[delta.index] ??= { id: "", name: "", arguments: "" });
          if (delta.id) slot.id = delta.id;
          if (delta.function?.name) slot.name += delta.function.name;
          if (delta.function?.arguments) slot.arguments += delta.function.arguments;
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    expect(calls).toEqual(TOOL_STREAM.toolCalls);
    expect(finish).toBe("tool_calls");
    expect(usage?.prompt_tokens).toBe(TOOL_STREAM.usage!.prompt_tokens);
    expect(usage?.completion_tokens).toBe(TOOL_STREAM.usage!.completion_tokens);
  });

  test("an assistant tool call and a tool result are forwarded in OpenAI form", async () => {
    await client.chat.completions.create({
      model: "up-model",
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
      ],
      tools: [weatherTool],
    });
    const messages = up.requests[0]!.body.messages;
    expect(messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } }],
    });
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: "call_1", content: "sunny" });
  });
});

describe("models.list", () => {
  test("the demo key sees demo-chat, up-model and alias", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    for (const id of ["demo-chat", "demo-chat-mini", "up-model", "alias"]) expect(ids).toContain(id);
    expect(ids.filter((id) => id === "up-model")).toHaveLength(1);
  });

  test("a key limited to one model lists only that model, and is refused others with 404", async () => {
    const tokens = await gw.admin("GET", "/v1/admin/tokens");
    const demoUserId = tokens.body.tokens.find((t: any) => t.name === "demo key").user_id;
    const created = await gw.admin("POST", "/v1/admin/tokens", { user_id: demoUserId, name: "alias only", permissions: ["chat"], models: ["alias"] });
    expect(created.status).toBe(201);
    const limited = new OpenAI({ baseURL: gw.url + "/v1", apiKey: created.body.key, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of limited.models.list()) ids.push(model.id);
    expect(ids).toEqual(["alias"]);
    const ok = await limited.chat.completions.create({ model: "alias", messages: [{ role: "user", content: "hi" }] });
    expect(ok.choices[0]!.message.content).toBe(PLAIN.choices[0].message.content);
    const error = await limited.chat.completions.create({ model: "up-model", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("usage rows", () => {
  test("a plain request writes one row with the upstream's token counts", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "alias", messages: [{ role: "user", content: "count me" }] })
      .withResponse();
    expect(data.usage!.prompt_tokens).toBe(PLAIN.usage.prompt_tokens);
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.model).toBe("alias");
    expect(row.endpoint).toBe("/v1/chat/completions");
    expect(row.prompt_tokens).toBe(PLAIN.usage.prompt_tokens);
    expect(row.completion_tokens).toBe(PLAIN.usage.completion_tokens);
    expect(row.status).toBe(200);
    expect(row.stream).toBe(false);
    expect(row.channel_id).toBe(channelId);
    expect(typeof row.timestamp).toBe("string");
    expect(Number.isNaN(Date.parse(row.timestamp))).toBe(false);
  });

  test("a streamed request writes one row with the usage the upstream streamed (caller did not ask for usage)", async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: "up-model", messages: [{ role: "user", content: "count me" }], stream: true })
      .withResponse();
    for await (const _ of stream) {
      // drain
    }
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.model).toBe("up-model");
    expect(row.endpoint).toBe("/v1/chat/completions");
    expect(row.prompt_tokens).toBe(STREAM.usage!.prompt_tokens);
    expect(row.completion_tokens).toBe(STREAM.usage!.completion_tokens);
    expect(row.status).toBe(200);
    expect(row.stream).toBe(true);
    expect(row.channel_id).toBe(channelId);
  });

  test("a mock-channel request writes a row whose tokens equal the response usage", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "demo-chat", messages: [{ role: "user", content: "count me too" }] })
      .withResponse();
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.model).toBe("demo-chat");
    expect(row.endpoint).toBe("/v1/chat/completions");
    expect(row.prompt_tokens).toBe(data.usage!.prompt_tokens);
    expect(row.completion_tokens).toBe(data.usage!.completion_tokens);
  });

  test("a streamed tool call writes the tool stream's usage", async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: "up-model", messages: [{ role: "user", content: "tools" }], tools: [weatherTool, timeTool], stream: true })
      .withResponse();
    for await (const _ of stream) {
      // drain
    }
    const row = await usageRowOf(response.headers.get("x-request-id")!);
    expect(row.prompt_tokens).toBe(TOOL_STREAM.usage!.prompt_tokens);
    expect(row.completion_tokens).toBe(TOOL_STREAM.usage!.completion_tokens);
  });
});
