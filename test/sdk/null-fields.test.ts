import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import type OpenAI from "openai";
import { bearer } from "../helpers/gateway.ts";
import { MODELS, onlyRequest, openAiWeatherTool, startWorld, type World } from "./_support.ts";

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/**
 * What the Python SDKs send for an argument passed as `None`, and what a message replayed with
 * `message.model_dump()` carries: nulls where a field was not given.
 */
const replayedAssistant = { role: "assistant", content: "It is sunny.", refusal: null, audio: null, function_call: null, tool_calls: null, annotations: [], name: null };
const pythonNulls = {
  messages: [{ role: "user", content: "weather?" }, replayedAssistant, { role: "user", content: "and tomorrow?", name: null }],
  user: null,
  tools: null,
  tool_choice: null,
};

test("chat completions read null as a field not given: translated to an anthropic channel, nothing of it is sent", async () => {
  const body = { model: MODELS.anthropic, ...pythonNulls } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const completion = await world.openai.chat.completions.create(body);
  expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
  const sent = onlyRequest(world, "anthropic").body;
  expect(sent.tools).toBeUndefined();
  expect(sent.tool_choice).toBeUndefined();
  expect(sent.metadata).toBeUndefined();
  expect(sent.messages.map((message: { role: string }) => message.role)).toEqual(["user", "assistant", "user"]);
});

test("a tool result with name null and an assistant turn with tool_calls beside null fields reach a gemini channel as a call and its answer", async () => {
  const call = { id: "call_1", type: "function", function: { name: openAiWeatherTool.function.name, arguments: '{"city":"Paris"}' } };
  const body = {
    model: MODELS.gemini,
    messages: [
      { role: "user", content: "weather in Paris?", name: null },
      { role: "assistant", content: null, refusal: null, function_call: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "call_1", content: "18C", name: null },
    ],
    tools: [openAiWeatherTool],
  } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  await world.openai.chat.completions.create(body);
  const contents = onlyRequest(world, "gemini").body.contents;
  expect(contents[1].parts[0].functionCall).toMatchObject({ name: openAiWeatherTool.function.name, args: { city: "Paris" } });
  expect(contents[2].parts[0].functionResponse.name).toBe(openAiWeatherTool.function.name);
});

test("generateContent reads null as the field's default, as proto3 JSON does: translated to an openai channel", async () => {
  const response = await world.gw.fetch(`/v1beta/models/${MODELS.openai}:generateContent`, {
    method: "POST",
    headers: { ...bearer(world.key), "content-type": "application/json" },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      systemInstruction: null,
      tools: null,
      toolConfig: null,
      generationConfig: { temperature: null, topP: null, stopSequences: null, maxOutputTokens: 20, thinkingConfig: null },
    }),
  });
  expect(response.status).toBe(200);
  const sent = onlyRequest(world, "openai").body;
  expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(20);
  for (const field of ["temperature", "top_p", "stop", "tools", "tool_choice"]) expect(sent).not.toHaveProperty(field);
  expect(sent.messages).toEqual([{ role: "user", content: "hi" }]);
});

test("a required field sent as null is still refused with 400, in the caller's error shape", async () => {
  const chat = await world.gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: { ...bearer(world.key), "content-type": "application/json" },
    body: JSON.stringify({ model: MODELS.openai, messages: null }),
  });
  expect(chat.status).toBe(400);
  expect((await chat.json()).error.param).toBe("messages");
  const gemini = await world.gw.fetch(`/v1beta/models/${MODELS.openai}:generateContent`, {
    method: "POST",
    headers: { ...bearer(world.key), "content-type": "application/json" },
    body: JSON.stringify({ contents: null }),
  });
  expect(gemini.status).toBe(400);
  expect((await gemini.json()).error.status).toBe("INVALID_ARGUMENT");
  expect(world.upstreams.openai.requests).toHaveLength(0);
});

/** An OpenAI-compatible server that sends null where OpenAI leaves a field out (ids, model, created). */
const nullyCompletion = {
  id: null,
  object: "chat.completion",
  created: null,
  model: null,
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: null, tool_calls: [{ id: null, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
};
const nullyChunks = [
  { id: null, model: null, created: null, choices: [{ index: null, delta: { role: "assistant", content: "Sun" }, finish_reason: null }] },
  { id: null, model: null, created: null, choices: [{ index: null, delta: { content: "ny." }, finish_reason: "stop" }] },
  { id: null, model: null, created: null, choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } },
];

test("an openai upstream's nulls for ids, model and created are read as not given: answers reach an Anthropic caller whole", async () => {
  world.upstreams.openai.setBehavior({ completion: nullyCompletion });
  const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 50, messages: [{ role: "user", content: "weather?" }] });
  expect(message.stop_reason).toBe("tool_use");
  const call = message.content.find((block) => block.type === "tool_use")!;
  expect(call).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
  expect(call.type === "tool_use" && call.id.length).toBeGreaterThan(0);
  expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });

  world.upstreams.openai.setBehavior({
    script: () => new Response(nullyChunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n", { headers: { "content-type": "text/event-stream" } }),
  });
  const stream = world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 50, messages: [{ role: "user", content: "weather?" }] });
  const streamed = await stream.finalMessage();
  expect(streamed.content.map((block) => (block.type === "text" ? block.text : block.type))).toEqual(["Sunny."]);
  expect(streamed.usage).toMatchObject({ input_tokens: 12, output_tokens: 2 });
});
