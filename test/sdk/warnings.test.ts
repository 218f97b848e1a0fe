import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type Anthropic from "@anthropic-ai/sdk";
import { bearer } from "../helpers/gateway.ts";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";
import { MODELS, onlyRequest, startWorld, type World, warningsOf } from "./_support.ts";

/**
 * Issue 3 item 2: "A parameter an upstream cannot honour is reported (a warning header or
 * log), not silently dropped." Anthropic has no frequency_penalty.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

function post(body: unknown): Promise<Response> {
  return world.gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(world.key), body: JSON.stringify(body) });
}

test("openai caller -> anthropic upstream: frequency_penalty is named in x-gateway-warnings, and not sent", async () => {
  const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 });
  expect(response.status).toBe(200);
  const json: any = await response.json();
  expect(json.object).toBe("chat.completion");
  expect(warningsOf(response)).toContain("frequency_penalty");
  expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("frequency_penalty");
});

test("streamed: the warning header is on the stream response too", async () => {
  const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5, stream: true });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  expect(warningsOf(response)).toContain("frequency_penalty");
  expect(await response.text()).toContain("data: [DONE]");
});

test("the header is readable through the openai SDK (withResponse)", async () => {
  const { response } = await world.openai.chat.completions
    .create({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 })
    .withResponse();
  expect(warningsOf(response)).toContain("frequency_penalty");
});

test("no warning when nothing is dropped: frequency_penalty to a gemini upstream is sent as frequencyPenalty", async () => {
  const response = await post({ model: MODELS.gemini, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(response.headers.get("x-gateway-warnings")).toBeNull();
  expect(onlyRequest(world, "gemini").body.generationConfig.frequencyPenalty).toBe(0.5);
});

const hello = [{ role: "user" as const, content: "Hello" }];
const citySchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };

test("openai response_format json_schema -> gemini upstream: responseMimeType and responseJsonSchema, no warning", async () => {
  const response = await post({ model: MODELS.gemini, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } } });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(response.headers.get("x-gateway-warnings")).toBeNull();
  const config = onlyRequest(world, "gemini").body.generationConfig;
  expect(config.responseMimeType).toBe("application/json");
  expect(config.responseJsonSchema).toEqual(citySchema);
});

test("openai response_format json_object -> anthropic upstream, which has no JSON mode: named in x-gateway-warnings", async () => {
  const response = await post({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_object" } });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(warningsOf(response)).toContain("response_format");
});

test("genai responseMimeType + responseSchema -> openai upstream: response_format json_schema with JSON Schema types", async () => {
  const { text } = await world.genai.models.generateContent({
    model: MODELS.openai,
    contents: "Hello",
    config: { responseMimeType: "application/json", responseSchema: { type: "OBJECT" as any, properties: { city: { type: "STRING" as any } } } },
  });
  expect(typeof text).toBe("string");
  expect(onlyRequest(world, "openai").body.response_format).toEqual({
    type: "json_schema",
    json_schema: { name: "response", schema: { type: "object", properties: { city: { type: "string" } } } },
  });
});

test("openai parallel_tool_calls false -> anthropic upstream: tool_choice.disable_parallel_tool_use", async () => {
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
  const response = await post({ model: MODELS.anthropic, messages: hello, tools, parallel_tool_calls: false });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(response.headers.get("x-gateway-warnings")).toBeNull();
  expect(onlyRequest(world, "anthropic").body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
});

test("anthropic disable_parallel_tool_use -> openai upstream: parallel_tool_calls false", async () => {
  await world.anthropic.messages.create({
    model: MODELS.openai,
    max_tokens: 50,
    messages: hello,
    tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} } }],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
  });
  const body = onlyRequest(world, "openai").body;
  expect(body.parallel_tool_calls).toBe(false);
  expect(body.tool_choice).toBe("required");
});

test("fields the canonical form does not carry are each named for an upstream of another format", async () => {
  const { response } = await world.anthropic.messages
    .create({ model: MODELS.gemini, max_tokens: 2000, messages: hello, container: "container_1", metadata: { user_id: "u-1" } } as Anthropic.MessageCreateParamsNonStreaming)
    .withResponse();
  expect(warningsOf(response)).toContain("container: not passed on: only an upstream of the anthropic format takes it");
  expect(warningsOf(response)).toContain("metadata");

  const gemini = await world.gw.fetch(`/v1beta/models/${MODELS.openai}:generateContent`, {
    method: "POST",
    headers: bearer(world.key),
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "Hello" }] }],
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
      generationConfig: { temperature: 0.5, mediaResolution: "MEDIA_RESOLUTION_LOW" },
    }),
  });
  expect(gemini.status).toBe(200);
  await gemini.arrayBuffer();
  expect(warningsOf(gemini)).toContain("safetySettings");
  expect(warningsOf(gemini)).toContain("generationConfig.mediaResolution");
  expect(warningsOf(gemini)).not.toContain("temperature");
});

test("the same fields reach an upstream of the caller's own format untouched, with no warning", async () => {
  const responseFormat = { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } };
  const response = await post({ model: MODELS.openai, messages: hello, response_format: responseFormat, logprobs: true, user: "u-1" });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(response.headers.get("x-gateway-warnings")).toBeNull();
  const body = onlyRequest(world, "openai").body;
  expect(body.response_format).toEqual(responseFormat);
  expect(body.logprobs).toBe(true);
});

test("the demo model answers JSON when JSON is asked for, so nothing is warned", async () => {
  const response = await post({ model: MODELS.mock, messages: hello, response_format: { type: "json_object" } });
  expect(response.status).toBe(200);
  const answer = JSON.parse((await response.json()).choices[0].message.content);
  expect(answer.reply).toContain("This is a mock reply");
  expect(warningsOf(response)).not.toContain("response_format");
});

describe("settings inside the messages and tools, and a caller's headers, that only the caller's format takes", () => {
  const pictureQuestion = [
    { role: "user" as const, content: [{ type: "text" as const, text: "What is this?" }, { type: "image_url" as const, image_url: { url: "https://example.com/cat.png", detail: "low" as const } }] },
  ];
  const strictTool = { type: "function" as const, function: { name: "get_weather", parameters: citySchema, strict: true } };

  test("openai caller: an image's detail is named for an anthropic upstream (a tool's strict is carried)", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: pictureQuestion, tools: [strictTool] }).withResponse();
    expect(warningsOf(response)).toContain("messages[0].content[1].image_url.detail: not passed on: only an upstream of the openai format takes it");
    expect(warningsOf(response)).not.toContain("strict");
  });

  test("openai caller: an openai upstream gets both as sent, with no warning", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.openai, messages: pictureQuestion, tools: [strictTool] }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "openai").body;
    expect(body.messages[0].content[1].image_url.detail).toBe("low");
    expect(body.tools[0].function.strict).toBe(true);
  });

  test("anthropic caller: a strict tool, which Gemini cannot hold to its schema, and the betas are named for a gemini upstream", async () => {
    const { response } = await world.anthropic.beta.messages
      .create({
        model: MODELS.gemini,
        max_tokens: 50,
        messages: hello,
        tools: [{ name: "get_weather", input_schema: citySchema as any, strict: true }],
        betas: ["context-1m-2025-08-07"],
      })
      .withResponse();
    expect(warningsOf(response)).toContain("strict (tool get_weather): not supported by the upstream; the arguments are not held to the tool's schema");
    expect(warningsOf(response)).toContain("anthropic-beta: not passed on");
  });

  test("openai caller: a last assistant message is named for an anthropic upstream, which continues it as a prefill", async () => {
    const messages = [{ role: "user" as const, content: "Give me JSON" }, { role: "assistant" as const, content: "{" }];
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages }).withResponse();
    expect(warningsOf(response)).toContain("messages: ends with an assistant turn, which the upstream continues as the start of its answer (a prefill)");
    expect(onlyRequest(world, "anthropic").body.messages.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "{" }] });

    const native = await world.openai.chat.completions.create({ model: MODELS.openai, messages }).withResponse();
    expect(native.response.headers.get("x-gateway-warnings")).toBeNull();
    const answered = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: messages.slice(0, 1) }).withResponse();
    expect(answered.response.headers.get("x-gateway-warnings")).toBeNull();
  });

  test("gemini caller: a last model content, several in a row being one turn, is named as contents; one left empty is no turn", async () => {
    const generate = (contents: unknown[]) =>
      world.gw.fetch(`/v1beta/models/${MODELS.anthropic}:generateContent`, { method: "POST", headers: bearer(world.key), body: JSON.stringify({ contents }) });
    const question = { role: "user", parts: [{ text: "Give me JSON" }] };
    const response = await generate([question, { role: "model", parts: [{ text: "{" }] }, { role: "model", parts: [{ text: '"a":' }] }]);
    expect(response.status).toBe(200);
    expect(warningsOf(response)).toContain("contents: ends with an assistant turn, which the upstream continues as the start of its answer (a prefill)");
    expect(onlyRequest(world, "anthropic").body.messages.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "{" }, { type: "text", text: '"a":' }] });

    const blank = await generate([question, { role: "model", parts: [{ text: " " }] }]);
    expect(blank.status).toBe(200);
    expect(blank.headers.get("x-gateway-warnings")).toBeNull();
  });

  test("responses caller: a last assistant message is named as input", async () => {
    const input = [{ role: "user" as const, content: "Give me JSON" }, { role: "assistant" as const, content: "{" }];
    const { response } = await world.openai.responses.create({ model: MODELS.anthropic, input, store: false }).withResponse();
    expect(warningsOf(response)).toContain("input: ends with an assistant turn, which the upstream continues as the start of its answer (a prefill)");
    expect(onlyRequest(world, "anthropic").body.messages.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "{" }] });

    const answered = await world.openai.responses.create({ model: MODELS.anthropic, input: input.slice(0, 1), store: false }).withResponse();
    expect(answered.response.headers.get("x-gateway-warnings")).toBeNull();
  });

  test("gemini caller: counting the tokens of a conversation that ends with a model content names no prefill, as nothing is answered", async () => {
    const contents = [{ role: "user", parts: [{ text: "Give me JSON" }] }, { role: "model", parts: [{ text: "{" }] }];
    const response = await world.gw.fetch(`/v1beta/models/${MODELS.anthropic}:countTokens`, { method: "POST", headers: bearer(world.key), body: JSON.stringify({ contents }) });
    expect(response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").path).toBe("/v1/messages/count_tokens");
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
  });

  test("anthropic caller: a prefill is named for an openai upstream, which answers it with a turn of its own", async () => {
    const messages = [{ role: "user" as const, content: "Give me JSON" }, { role: "assistant" as const, content: "{" }];
    const { response } = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 50, messages }).withResponse();
    expect(warningsOf(response)).toContain("messages[1]: a prefill, sent as a finished assistant turn");

    const native = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 50, messages }).withResponse();
    expect(native.response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "anthropic").body.messages).toEqual(messages);
  });
});

describe("a system or developer message in the middle of an OpenAI conversation", () => {
  const conversation = [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content: "Hello" },
    { role: "assistant" as const, content: "Hi." },
    { role: "developer" as const, content: "From now on, answer in French." },
    { role: "user" as const, content: "How are you?" },
  ];

  test("is moved into an anthropic upstream's one system prompt, and named in the warnings", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: conversation }).withResponse();
    expect(warningsOf(response)).toContain("messages[3]: a system message after the conversation began, moved to the top");
    expect(warningsOf(response)).not.toContain("messages[0]");
    const body = onlyRequest(world, "anthropic").body;
    expect(body.system).toBe("You are terse.\n\nFrom now on, answer in French.");
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  test("the same for a gemini upstream's systemInstruction, streamed", async () => {
    const response = await post({ model: MODELS.gemini, messages: conversation, stream: true });
    expect(warningsOf(response)).toContain("messages[3]: a system message after the conversation began, moved to the top");
    await response.arrayBuffer();
    expect(onlyRequest(world, "gemini").body.systemInstruction).toEqual({ parts: [{ text: "You are terse.\n\nFrom now on, answer in French." }] });
  });

  test("an openai upstream gets it where it was, with no warning; one at the top is no warning anywhere", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.openai, messages: conversation }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "openai").body.messages[3]).toEqual(conversation[3]);

    const atTop = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: conversation.slice(0, 2) }).withResponse();
    expect(atTop.response.headers.get("x-gateway-warnings")).toBeNull();
  });
});

describe("warnings about fields named in any characters reach the caller in a header it can read", () => {
  // A field name a header cannot carry (beyond Latin-1, or a CR/LF) once made the response fail
  // after the upstream had answered and the request was billed: a 500 charged, retried, charged again.
  const oddFields = { "ключ": 1, "line\r\nbreak": 2, "nul\u0000": 3 };

  test("whole: 200, the names written as \\u escapes, one usage row at 200", async () => {
    const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], ...oddFields });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("chat.completion");
    const warnings = warningsOf(response);
    expect(warnings).toContain("\\u043a\\u043b\\u044e\\u0447");
    expect(warnings).toContain("line\\u000d\\u000abreak");
    expect(warnings).toMatch(/^[\x20-\x7e]+$/);
    const rows = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
    expect(rows.map((row: { status: number }) => row.status)).toEqual([200]);
  });

  test("streamed: the stream comes whole, and its row is written", async () => {
    const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], stream: true, ...oddFields });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("data: [DONE]");
    expect(warningsOf(response)).toContain("\\u043a");
    const rows = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
    expect(rows.map((row: { status: number }) => row.status)).toEqual([200]);
  });

  test("thousands of unknown fields: the header is cut at 4,096 characters, saying so", async () => {
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`unknown_field_${i}`, i]));
    const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], ...many });
    expect(response.status).toBe(200);
    const warnings = warningsOf(response);
    expect(warnings.length).toBe(4096);
    expect(warnings.endsWith("; (more left out)")).toBe(true);
  });
});
