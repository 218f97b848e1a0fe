import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import type { Content } from "@google/genai";
import {
  anthropicWeatherTool,
  call,
  CALLERS,
  expectedOf,
  expectResultUpstream,
  genaiWeatherTool,
  KINDS,
  MODELS,
  onlyRequest,
  openAiWeatherTool,
  REMOTE_KINDS,
  startWorld,
  type CallerName,
  type KindName,
  type RemoteKind,
  type ToolCall,
  type World,
  WEATHER_REPORT,
} from "./_support.ts";

/**
 * Issue 3 items 1 and 5, tool calling: every caller SDK against every upstream kind, plain
 * and streamed. The call comes back with the upstream's function name and arguments (as an
 * object), and a second turn carrying the tool result reaches the upstream in its own format
 * (OpenAI role "tool" message, Anthropic tool_result block, Gemini functionResponse part),
 * paired with the call it answers.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const TOOL_FINISH: Record<CallerName, string> = { openai: "tool_calls", anthropic: "tool_use", genai: "STOP" };
const RESULT = WEATHER_REPORT;

/** The mock fills each required property with a placeholder: only `location` is required. */
function expectMockCall(toolCall: ToolCall) {
  expect(toolCall.name).toBe("get_weather");
  expect(Object.keys(toolCall.args as object)).toEqual(["location"]);
  expect(typeof (toolCall.args as any).location).toBe("string");
}

describe.each(CALLERS.map((c) => [c]))("caller SDK %s", (caller: CallerName) => {
  describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
    for (const mode of ["plain", "stream"] as const) {
      test(`${mode}: the upstream's tool calls, names and arguments as objects`, async () => {
        const outcome = await call[caller][mode](world, { model: MODELS[kind], prompt: "What is the weather in Paris?", tools: true });
        expect(outcome.finish).toBe(TOOL_FINISH[caller]);
        if (caller !== "genai") for (const toolCall of outcome.toolCalls) expect(toolCall.id).toBeTruthy();
        if (caller !== "genai") expect(new Set(outcome.toolCalls.map((c) => c.id)).size).toBe(outcome.toolCalls.length);
        if (kind === "mock") {
          expect(outcome.toolCalls).toHaveLength(1);
          return expectMockCall(outcome.toolCalls[0]!);
        }
        const expected = expectedOf(kind, mode, true);
        expect(expected.tools.length).toBeGreaterThan(0);
        expect(outcome.toolCalls.map((c) => ({ name: c.name, args: c.args }))).toEqual(expected.tools);
        // The upstream was offered the tool in its own format.
        const body = onlyRequest(world, kind).body;
        if (kind === "openai") expect(body.tools[0].function.name).toBe("get_weather");
        if (kind === "anthropic") expect(body.tools[0]).toMatchObject({ name: "get_weather", input_schema: { type: "object", required: ["location"] } });
        // A Gemini caller's own declaration passes through; a translated one is JSON Schema.
        const schemaField = caller === "genai" ? "parameters" : "parametersJsonSchema";
        if (kind === "gemini") expect(body.tools[0].functionDeclarations[0]).toMatchObject({ name: "get_weather", [schemaField]: { required: ["location"] } });
      });
    }

    if (caller === "openai") {
      test("stream helper: finalChatCompletion() has the tool call", async () => {
        const stream = world.openai.chat.completions.stream({
          model: MODELS[kind],
          messages: [{ role: "user", content: "What is the weather in Paris?" }],
          tools: [openAiWeatherTool],
        });
        const final = await stream.finalChatCompletion();
        expect(final.choices[0]!.finish_reason).toBe("tool_calls");
        const calls = (final.choices[0]!.message.tool_calls ?? []).map((c: any) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) }));
        if (kind === "mock") {
          expect(calls).toHaveLength(1);
          return expectMockCall(calls[0]!);
        }
        expect(calls).toEqual(expectedOf(kind, "stream", true).tools);
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Second turn: the tool result goes back

/** Runs turn one and turn two through `caller` against `kind`; returns the second answer's text. */
const secondTurn: Record<CallerName, (model: string) => Promise<{ firstCall: ToolCall; text: string }>> = {
  async openai(model) {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await world.openai.chat.completions.create({ model, messages, tools: [openAiWeatherTool] });
    const message = first.choices[0]!.message;
    const toolCall = message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    messages.push(message);
    messages.push({ role: "tool", tool_call_id: toolCall.id, content: JSON.stringify(RESULT) });
    const second = await world.openai.chat.completions.create({ model, messages, tools: [openAiWeatherTool] });
    return { firstCall: { id: toolCall.id, name: toolCall.function.name, args: JSON.parse(toolCall.function.arguments) }, text: second.choices[0]!.message.content ?? "" };
  },
  async anthropic(model) {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await world.anthropic.messages.create({ model, max_tokens: 512, messages, tools: [anthropicWeatherTool] });
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    messages.push({ role: "assistant", content: first.content });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: JSON.stringify(RESULT) }] });
    const second = await world.anthropic.messages.create({ model, max_tokens: 512, messages, tools: [anthropicWeatherTool] });
    return { firstCall: { id: use.id, name: use.name, args: use.input }, text: second.content.map((b) => (b.type === "text" ? b.text : "")).join("") };
  },
  async genai(model) {
    // As Google's function-calling guide does it: the model's content back as is, then a
    // functionResponse part naming the function.
    const contents: Content[] = [{ role: "user", parts: [{ text: "What is the weather in Paris?" }] }];
    const first = await world.genai.models.generateContent({ model, contents, config: { tools: [genaiWeatherTool] } });
    const functionCall = first.functionCalls![0]!;
    contents.push(first.candidates![0]!.content!);
    contents.push({ role: "user", parts: [{ functionResponse: { name: functionCall.name!, response: RESULT } }] });
    const second = await world.genai.models.generateContent({ model, contents, config: { tools: [genaiWeatherTool] } });
    return {
      firstCall: { id: functionCall.id, name: functionCall.name!, args: functionCall.args },
      text: (second.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? "").join(""),
    };
  },
};

describe.each(CALLERS.map((c) => [c]))("second turn with the tool result, caller SDK %s", (caller: CallerName) => {
  test.each(REMOTE_KINDS.map((k) => [k]))("%s upstream receives the call and its result in its own format", async (kind) => {
    const { firstCall } = await secondTurn[caller](MODELS[kind as RemoteKind]);
    const requests = world.upstreams[kind as RemoteKind].requests;
    expect(requests).toHaveLength(2);
    expect(firstCall.name).toBe("get_weather");
    expectResultUpstream(kind as RemoteKind, requests[1]!.body, "get_weather");
  });

  test("mock upstream: accepted, and the answer uses the tool result", async () => {
    const { firstCall, text } = await secondTurn[caller](MODELS.mock);
    expect(firstCall.name).toBe("get_weather");
    // The mock answers a tool result by echoing it rather than calling the tool again.
    expect(text).toContain("light rain");
  });
});

describe("a gemini upstream's parallel calls of one function, which Gemini sends without ids", () => {
  const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 };
  const twoCalls = {
    candidates: [
      {
        content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { location: "Paris" } } }, { functionCall: { name: "get_weather", args: { location: "London" } } }] },
        finishReason: "STOP",
      },
    ],
    usageMetadata,
  };

  test("an openai caller gets two distinct ids, and its two results go back to Gemini as two functionResponses", async () => {
    world.upstreams.gemini.setBehavior({ response: twoCalls });
    const question = { role: "user" as const, content: "Paris and London?" };
    const first = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: [question], tools: [openAiWeatherTool] });
    const message = first.choices[0]!.message;
    const ids = message.tool_calls!.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);

    world.reset();
    await world.openai.chat.completions.create({
      model: MODELS.gemini,
      tools: [openAiWeatherTool],
      messages: [question, message, ...ids.map((id, i) => ({ role: "tool" as const, tool_call_id: id, content: i === 0 ? "18 C" : "12 C" }))],
    });
    const answers = onlyRequest(world, "gemini").body.contents.flatMap((c: { parts: any[] }) => c.parts).filter((p: any) => p.functionResponse);
    expect(answers.map((p: any) => p.functionResponse.name)).toEqual(["get_weather", "get_weather"]);
  });

  test("an anthropic caller gets two distinct tool_use ids", async () => {
    world.upstreams.gemini.setBehavior({ response: twoCalls });
    const message = await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 100, messages: [{ role: "user", content: "Paris and London?" }], tools: [anthropicWeatherTool] });
    const ids = message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });
});

describe("an openai upstream's streamed tool-call fragments, known only by their index", () => {
  const question = "Paris and London?";
  const streamAnthropic = async () =>
    world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: [{ role: "user", content: question }], tools: [anthropicWeatherTool] }).finalMessage();
  const streamGenai = async () => {
    const calls: { id?: string; name?: string; args?: unknown }[] = [];
    const stream = await world.genai.models.generateContentStream({ model: MODELS.openai, contents: question, config: { tools: [genaiWeatherTool] } });
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    return calls;
  };

  describe("two parallel calls whose fragments interleave (0, 1, 0, 1)", () => {
    beforeEach(() => world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-tool-stream-interleaved.sse" }));

    test("an anthropic caller gets two whole tool_use blocks, each with its own input, one block open at a time", async () => {
      const stream = world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: [{ role: "user", content: question }], tools: [anthropicWeatherTool] });
      let openBlock: number | null = null;
      const misplaced: string[] = [];
      stream.on("streamEvent", (event) => {
        if (event.type === "content_block_start") openBlock = event.index;
        else if (event.type === "content_block_stop") openBlock = null;
        else if (event.type === "content_block_delta" && event.index !== openBlock) misplaced.push(`delta for block ${event.index} while ${openBlock} is open`);
      });
      const message = await stream.finalMessage();
      expect(misplaced).toEqual([]);
      const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, input: b.input }] : []));
      expect(uses).toEqual([
        { id: "call_Interleaved0aB3", input: { location: "Paris" } },
        { id: "call_Interleaved1cD5", input: { location: "London" } },
      ]);
      expect(message.stop_reason).toBe("tool_use");
    });

    test("a genai caller gets both calls with their arguments", async () => {
      const calls = await streamGenai();
      expect(calls.map((c) => c.args)).toEqual([{ location: "Paris" }, { location: "London" }]);
    });
  });

  describe("one call whose id and name are repeated on a later fragment", () => {
    beforeEach(() => world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-tool-stream-repeated-header.sse" }));

    test("an anthropic caller gets one tool_use with the whole input", async () => {
      const message = await streamAnthropic();
      expect(message.content.map((b) => (b.type === "tool_use" ? b.input : b.type))).toEqual([{ location: "Paris" }]);
    });

    test("a genai caller gets one call with the whole arguments", async () => {
      const calls = await streamGenai();
      expect(calls.map((c) => ({ name: c.name, args: c.args }))).toEqual([{ name: "get_weather", args: { location: "Paris" } }]);
    });

    test("an openai caller, through the relay, still reassembles one call", async () => {
      const final = await world.openai.chat.completions
        .stream({ model: MODELS.openai, messages: [{ role: "user", content: question }], tools: [openAiWeatherTool] })
        .finalChatCompletion();
      const calls = final.choices[0]!.message.tool_calls!;
      expect(calls).toHaveLength(1);
      expect(calls[0]!.type === "function" && JSON.parse(calls[0]!.function.arguments)).toEqual({ location: "Paris" });
    });
  });
});

describe("a gemini upstream's thoughtSignature on a function call comes back to Gemini on the next turn", () => {
  // Standard base64 with '+', '/' and padding, as Gemini sends the signature's bytes.
  const signature = "CiQB0e2Kb+7xk3/QdQ4u9ZlP1aHq+Rr/2mTzYk0cP8X1c9yV5wsSAw==";
  const signedCall = {
    candidates: [
      { content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { location: "Paris" } }, thoughtSignature: signature }] }, finishReason: "STOP" },
    ],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 },
  };
  const modelTurnCalls = () =>
    onlyRequest(world, "gemini")
      .body.contents.filter((c: { role: string }) => c.role === "model")
      .flatMap((c: { parts: any[] }) => c.parts.filter((p) => p.functionCall));

  test("openai caller: the call's id carries it, and the signature goes back on the model turn's functionCall part", async () => {
    world.upstreams.gemini.setBehavior({ response: signedCall });
    const question = { role: "user" as const, content: "Weather in Paris?" };
    const first = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: [question], tools: [openAiWeatherTool] });
    const message = first.choices[0]!.message;
    const id = message.tool_calls![0]!.id;

    world.reset();
    await world.openai.chat.completions.create({
      model: MODELS.gemini,
      tools: [openAiWeatherTool],
      messages: [question, message, { role: "tool", tool_call_id: id, content: "18 C" }],
    });
    expect(modelTurnCalls()).toEqual([{ functionCall: { name: "get_weather", args: { location: "Paris" } }, thoughtSignature: signature }]);
  });

  test("anthropic caller, streamed: a tool_use id Anthropic's own pattern accepts, and the signature goes back", async () => {
    world.upstreams.gemini.setBehavior({ streamFixture: "gemini-tool-stream-signed.sse" });
    const first = await world.anthropic.messages
      .stream({ model: MODELS.gemini, max_tokens: 100, messages: [{ role: "user", content: "Weather in Paris?" }], tools: [anthropicWeatherTool] })
      .finalMessage();
    const use = first.content.find((b) => b.type === "tool_use")!;
    expect(use.type === "tool_use" && use.id).toMatch(/^[a-zA-Z0-9_-]+$/);

    world.reset();
    await world.anthropic.messages.create({
      model: MODELS.gemini,
      max_tokens: 100,
      tools: [anthropicWeatherTool],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.type === "tool_use" ? use.id : "", content: "18 C" }] },
      ],
    });
    expect(modelTurnCalls()[0].thoughtSignature).toBe(signature);
  });
});
