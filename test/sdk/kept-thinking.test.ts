import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createJsonLogger } from "../../src/lib/logger.ts";
import type OpenAI from "openai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { anthropicFixtureEvents, editedAnthropicStream } from "../helpers/anthropic-upstream.ts";
import { anthropicWeatherTool, createUserKey, MODELS, onlyRequest, openAiClient, openAiWeatherTool, startWorld, WEATHER_REPORT, warningsOf, type World } from "./_support.ts";

/**
 * A thinking Anthropic model's tool-use cycle, driven by callers of other formats. Anthropic
 * wants the tool-calling turn back with its signed thinking first while it thinks, and refuses
 * it otherwise (the loopback upstream does, as the real one); an OpenAI caller has no place
 * for the signature, so the gateway keeps the answer's thinking under its first tool call id
 * and puts it back when the caller answers that call.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const WHOLE = jsonFixture("anthropic-thinking-tools-message.json") as { content: any[] };
const WHOLE_THINKING = WHOLE.content.filter((block) => block.type !== "tool_use");
const STREAM_EVENTS = anthropicFixtureEvents("anthropic-thinking-tool-stream.sse");
/** The stream fixture's thinking blocks, assembled from its events independently of the gateway. */
const STREAM_THINKING = [
  {
    type: "thinking",
    thinking: STREAM_EVENTS.filter(({ data }) => data.delta?.type === "thinking_delta").map(({ data }) => data.delta.thinking).join(""),
    signature: STREAM_EVENTS.find(({ data }) => data.delta?.type === "signature_delta")!.data.delta.signature,
  },
  { type: "redacted_thinking", data: STREAM_EVENTS.find(({ data }) => data.content_block?.type === "redacted_thinking")!.data.content_block.data },
];

const asking: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "What's the weather in Paris?" }];
/** How many answers' thinking the gateway keeps. */
const keptRows = () => world.gw.database.sql.get<{ n: number }>("SELECT count(*) AS n FROM kept_thinking", [])!.n;
/** Forgets what earlier tests kept: the fixtures' answers all call tools under the same ids. */
const forgetKeptThinking = () => world.gw.database.sql.run("DELETE FROM kept_thinking", []);
const thinkingUpstream = () => world.upstreams.anthropic.setBehavior({ message: WHOLE, streamFixture: "anthropic-thinking-tool-stream.sse" });

/** The caller's second turn: its first turn's assistant message as the SDK gave it, and the tool's result. */
function answering(assistant: OpenAI.Chat.ChatCompletionMessageParam, callId: string): OpenAI.Chat.ChatCompletionMessageParam[] {
  return [...asking, assistant, { role: "tool", tool_call_id: callId, content: JSON.stringify(WEATHER_REPORT) }];
}

/** Sends the second turn, thinking, as the OpenAI SDK would; returns the response and what the upstream was sent. */
async function secondTurn(client: OpenAI, messages: OpenAI.Chat.ChatCompletionMessageParam[]) {
  world.upstreams.anthropic.reset();
  world.upstreams.anthropic.setBehavior({});
  const { response } = await client.chat.completions.create({ model: MODELS.anthropic, messages, tools: [openAiWeatherTool], reasoning_effort: "low" }).withResponse();
  return { response, sent: onlyRequest(world, "anthropic").body };
}

describe("an OpenAI caller's tool-use cycle keeps Anthropic's thinking on", () => {
  test("whole answers: the second turn carries the first answer's thinking blocks, verbatim and first, and the model thinks", async () => {
    thinkingUpstream();
    const first = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" });
    const message = first.choices[0]!.message;
    const call = message.tool_calls![0]!;
    expect(call.id).toBe(WHOLE.content.find((block) => block.type === "tool_use").id);

    const { response, sent } = await secondTurn(world.openai, answering(message, call.id));
    expect(response.status).toBe(200);
    expect(sent.thinking).toEqual({ type: "adaptive" });
    expect(sent.messages.at(-2).content).toEqual([...WHOLE_THINKING, { type: "tool_use", id: call.id, name: "get_weather", input: { location: "Paris, France", unit: "celsius" } }]);
    expect(warningsOf(response)).not.toContain("reasoning");
  });

  test("streamed answers: the thinking assembled from the stream's deltas and signature is what goes back", async () => {
    thinkingUpstream();
    const stream = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low", stream: true });
    let callId = "";
    let reasoning = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { tool_calls?: { id?: string }[]; reasoning_content?: string } | undefined;
      callId ||= delta?.tool_calls?.[0]?.id ?? "";
      reasoning += delta?.reasoning_content ?? "";
    }
    expect(callId).toBe(STREAM_EVENTS.find(({ data }) => data.content_block?.type === "tool_use")!.data.content_block.id);
    expect(reasoning).toBe(STREAM_THINKING[0]!.thinking as string);

    const assistant: OpenAI.Chat.ChatCompletionMessageParam = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: '{"location": "Paris, France", "unit": "celsius"}' } }],
    };
    const { response, sent } = await secondTurn(world.openai, answering(assistant, callId));
    expect(response.status).toBe(200);
    expect(sent.thinking).toEqual({ type: "adaptive" });
    expect(sent.messages.at(-2).content.slice(0, 2)).toEqual(STREAM_THINKING);
  });

  test("tool results followed by a user message (a tool's picture, say) still carry the thinking: Anthropic makes them one turn", async () => {
    thinkingUpstream();
    const first = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" });
    const message = first.choices[0]!.message;
    const messages = [...answering(message, message.tool_calls![0]!.id), { role: "user" as const, content: "Answer in French." }];

    const { response, sent } = await secondTurn(world.openai, messages);
    expect(response.status).toBe(200);
    expect(sent.thinking).toEqual({ type: "adaptive" });
    expect(sent.messages.at(-2).content.slice(0, 2)).toEqual(WHOLE_THINKING);
    expect(sent.messages.at(-1).content.map((block: { type: string }) => block.type)).toEqual(["tool_result", "text"]);
  });

  test("an answer with a thinking block that came unsigned keeps none: Anthropic refuses the sequence with a block left out", async () => {
    const unsigned = { ...WHOLE, content: WHOLE.content.map((block) => (block.type === "thinking" ? { ...block, signature: "" } : block)) };
    const lostSignature = (data: any) => {
      if (data.delta?.type === "signature_delta") data.delta.signature = "";
    };
    for (const stream of [false, true]) {
      forgetKeptThinking();
      world.upstreams.anthropic.setBehavior({ script: (request) => (request.body.stream ? editedAnthropicStream(lostSignature, { fixture: "anthropic-thinking-tool-stream.sse" }) : Response.json(unsigned)) });
      let callId = "";
      const asked = { model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" as const };
      if (stream) for await (const chunk of await world.openai.chat.completions.create({ ...asked, stream })) callId ||= chunk.choices[0]?.delta.tool_calls?.[0]?.id ?? "";
      else callId = (await world.openai.chat.completions.create(asked)).choices[0]!.message.tool_calls![0]!.id;
      const assistant: OpenAI.Chat.ChatCompletionMessageParam = { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: "{}" } }] };

      const { response, sent } = await secondTurn(world.openai, answering(assistant, callId));
      expect(response.status).toBe(200);
      expect(sent).not.toHaveProperty("thinking");
      expect(sent.messages.at(-2).content.map((block: { type: string }) => block.type)).toEqual(["tool_use"]);
      expect(warningsOf(response)).toContain("reasoning: not passed on for this turn");
    }
  });

  test("an answer with thinking between its tool calls (interleaved) keeps none: put back before the first call, it would be moved", async () => {
    const interleaved = { ...WHOLE, content: [WHOLE.content[0], WHOLE.content[2], WHOLE.content[1]] };
    // The stream fixture's redacted block (index 1) moved after its tool call's block (index 2).
    const events = anthropicFixtureEvents("anthropic-thinking-tool-stream.sse");
    const redacted = events.filter(({ data }) => data.index === 1);
    const reordered = events.filter(({ data }) => data.index !== 1);
    reordered.splice(reordered.findLastIndex(({ data }) => data.index === 2) + 1, 0, ...redacted);
    const sse = reordered.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
    for (const stream of [false, true]) {
      forgetKeptThinking();
      world.upstreams.anthropic.setBehavior({ script: (request) => (request.body.stream ? new Response(sse, { headers: { "content-type": "text/event-stream" } }) : Response.json(interleaved)) });
      const asked = { model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" as const };
      let callId = "";
      if (stream) for await (const chunk of await world.openai.chat.completions.create({ ...asked, stream })) callId ||= chunk.choices[0]?.delta.tool_calls?.[0]?.id ?? "";
      else callId = (await world.openai.chat.completions.create(asked)).choices[0]!.message.tool_calls![0]!.id;
      expect(callId).toStartWith("toolu_");
      await world.gw.services.usage.flush();
      expect(keptRows()).toBe(0);
    }
  });

  test("a stream cut before its end keeps nothing, though its thinking blocks all closed", async () => {
    forgetKeptThinking();
    world.upstreams.anthropic.setBehavior({ script: () => editedAnthropicStream(() => {}, { fixture: "anthropic-thinking-tool-stream.sse", cutBefore: "message_stop" }) });
    const stream = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low", stream: true });
    const read = async () => {
      for await (const _ of stream);
    };
    await expect(read()).rejects.toThrow("ended before the response was complete");
    await world.gw.services.usage.flush();
    expect(keptRows()).toBe(0);
  });

  test("the thinking is its owner's: another user answering the same call id gets no thinking, and a warning", async () => {
    thinkingUpstream();
    const first = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" });
    const message = first.choices[0]!.message;
    const other = await createUserKey(world.gw, { plan: "enterprise", balance: 1000 });

    const { response, sent } = await secondTurn(openAiClient(world.gw, other.key), answering(message, message.tool_calls![0]!.id));
    expect(response.status).toBe(200);
    expect(sent).not.toHaveProperty("thinking");
    expect(JSON.stringify(sent.messages)).not.toContain("signature");
    expect(warningsOf(response)).toContain("reasoning: not passed on for this turn");
  });

  test("a turn that does not ask to think is sent without the thinking, as before", async () => {
    thinkingUpstream();
    const first = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" });
    const message = first.choices[0]!.message;
    world.upstreams.anthropic.reset();
    world.upstreams.anthropic.setBehavior({});
    const plain = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: answering(message, message.tool_calls![0]!.id), tools: [openAiWeatherTool] });
    expect(plain.choices[0]!.message.content).toBeTruthy();
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent).not.toHaveProperty("thinking");
    expect(sent.messages.at(-2).content.map((block: { type: string }) => block.type)).toEqual(["tool_use"]);
  });
});

test("a Responses caller continuing by previous_response_id keeps the thinking on too", async () => {
  thinkingUpstream();
  const first = await world.openai.responses.create({ model: MODELS.anthropic, input: "What's the weather in Paris?", tools: [{ type: "function", name: "get_weather", parameters: openAiWeatherTool.function.parameters ?? {}, strict: false }], reasoning: { effort: "low" } });
  const call = first.output.find((item) => item.type === "function_call")!;
  expect(call.type === "function_call" && call.call_id).toBe(WHOLE.content.find((block) => block.type === "tool_use").id);

  world.upstreams.anthropic.reset();
  world.upstreams.anthropic.setBehavior({});
  const second = await world.openai.responses.create({
    model: MODELS.anthropic,
    previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: JSON.stringify(WEATHER_REPORT) }],
    reasoning: { effort: "low" },
  });
  expect(second.status).toBe("completed");
  const sent = onlyRequest(world, "anthropic").body;
  expect(sent.thinking).toEqual({ type: "adaptive" });
  expect(sent.messages.at(-2).content.slice(0, 2)).toEqual(WHOLE_THINKING);
});

test("a genai caller that sends its function call back with its id keeps the thinking on", async () => {
  thinkingUpstream();
  const config = { tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT" as never, properties: { location: { type: "STRING" as never } } } }] }], thinkingConfig: { thinkingBudget: 2048 } };
  const first = await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "What's the weather in Paris?", config });
  const call = first.functionCalls![0]!;
  expect(call.id).toBe(WHOLE.content.find((block) => block.type === "tool_use").id);

  world.upstreams.anthropic.reset();
  world.upstreams.anthropic.setBehavior({});
  const second = await world.genai.models.generateContent({
    model: MODELS.anthropic,
    contents: [
      { role: "user", parts: [{ text: "What's the weather in Paris?" }] },
      first.candidates![0]!.content!,
      { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: WEATHER_REPORT } }] },
    ],
    config,
  });
  expect(second.text).toBeTruthy();
  const sent = onlyRequest(world, "anthropic").body;
  expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  expect(sent.messages.at(-2).content.slice(0, 2)).toEqual(WHOLE_THINKING);
});

test("an Anthropic caller's answers keep nothing: its thinking travels in its own turns", async () => {
  forgetKeptThinking();
  thinkingUpstream();
  const ask = { model: MODELS.anthropic, max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, messages: [{ role: "user" as const, content: "What's the weather in Paris?" }], tools: [anthropicWeatherTool] };
  const whole = await world.anthropic.messages.create(ask);
  expect(whole.content.map((block) => block.type)).toEqual(["thinking", "redacted_thinking", "tool_use"]);
  for await (const _ of await world.anthropic.messages.create({ ...ask, stream: true }));
  expect(keptRows()).toBe(0);
});

describe("with the store's table gone (each read and write of it fails, and says so in the log)", () => {
  let lines: string[];
  let broken: World;
  beforeAll(async () => {
    lines = [];
    broken = await startWorld({ log: createJsonLogger((line) => lines.push(line), Date.now) });
    broken.gw.database.sql.run("DROP TABLE kept_thinking", []);
  });
  afterAll(() => broken.close());
  beforeEach(() => {
    broken.reset();
    lines.length = 0;
  });
  const logged = (message: string) => lines.some((line) => JSON.parse(line).message === message);

  test("an answer whose thinking cannot be kept is still given, and its usage row committed", async () => {
    broken.upstreams.anthropic.setBehavior({ message: WHOLE });
    const { data, response } = await broken.openai.chat.completions.create({ model: MODELS.anthropic, messages: asking, tools: [openAiWeatherTool], reasoning_effort: "low" }).withResponse();
    expect(data.choices[0]!.message.tool_calls).toHaveLength(1);
    expect(logged("thinking not kept")).toBe(true);
    const row = broken.gw.database.sql.get("SELECT status, completion_tokens FROM usage_logs WHERE request_id = ?", [response.headers.get("x-request-id")]);
    expect(row).toMatchObject({ status: 200, completion_tokens: data.usage!.completion_tokens });
    expect(data.usage!.completion_tokens).toBeGreaterThan(0);
  });

  test("a turn answering tool calls of a model no Anthropic channel serves does not look for kept thinking", async () => {
    const answered = (model: string) =>
      broken.openai.chat.completions.create({
        model,
        reasoning_effort: "low",
        tools: [openAiWeatherTool],
        messages: [...asking, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] }, { role: "tool", tool_call_id: "call_1", content: "sunny" }],
      });
    await answered(MODELS.anthropic);
    expect(logged("kept thinking not read")).toBe(true);
    lines.length = 0;
    for (const model of [MODELS.openai, MODELS.gemini]) await answered(model);
    expect(logged("kept thinking not read")).toBe(false);
  });
});
