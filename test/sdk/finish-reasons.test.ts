import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { FinishReason } from "@google/genai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { anthropicWeatherTool, MODELS, startWorld, type World } from "./_support.ts";

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** An OpenAI chunk event of one choice. */
function chunk(delta: object, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** A tool call streamed the way OpenAI answers a named tool_choice: finish_reason "stop". */
const TOOL_CALL_ENDING_IN_STOP =
  chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":"Paris"}' } }] }) +
  chunk({}, "stop") +
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } })}\n\n` +
  "data: [DONE]\n\n";

describe("an OpenAI-compatible upstream that ends a tool call with finish_reason 'stop' (OpenAI for a named tool_choice, vLLM, SGLang)", () => {
  test("an Anthropic caller gets stop_reason tool_use, whole", async () => {
    const completion = jsonFixture("openai-chat-completion-tools.json");
    completion.choices[0].finish_reason = "stop";
    world.upstreams.openai.setBehavior({ completion });
    const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 64, messages: [{ role: "user", content: "weather?" }], tools: [anthropicWeatherTool] });
    expect(message.content.some((block) => block.type === "tool_use")).toBe(true);
    expect(message.stop_reason).toBe("tool_use");
  });

  test("an Anthropic caller gets stop_reason tool_use, streamed", async () => {
    world.upstreams.openai.setBehavior({ script: () => new Response(TOOL_CALL_ENDING_IN_STOP, { headers: { "content-type": "text/event-stream" } }) });
    const stream = world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 64, messages: [{ role: "user", content: "weather?" }], tools: [anthropicWeatherTool] });
    const message = await stream.finalMessage();
    expect(message.content.some((block) => block.type === "tool_use")).toBe(true);
    expect(message.stop_reason).toBe("tool_use");
  });

  test("an answer of text alone that says 'stop' still ends its turn", async () => {
    world.upstreams.openai.setBehavior({ completion: jsonFixture("openai-chat-completion.json") });
    const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 64, messages: [{ role: "user", content: "hi" }], tools: [anthropicWeatherTool] });
    expect(message.stop_reason).toBe("end_turn");
  });

  test("the Anthropic SDK's tool runner runs the named tool and sends its result back", async () => {
    let turn = 0;
    world.upstreams.openai.setBehavior({
      script: (request) => {
        turn++;
        const completion = jsonFixture(turn === 1 ? "openai-chat-completion-tools.json" : "openai-chat-completion.json");
        if (turn === 1 && typeof request.body.tool_choice === "object") completion.choices[0].finish_reason = "stop";
        return Response.json(completion);
      },
    });
    let ran = 0;
    const weather = betaTool({
      name: "get_weather",
      description: "Current weather",
      inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
      run: () => {
        ran++;
        return "18C, light rain";
      },
    });
    const final = await world.anthropic.beta.messages
      .toolRunner({
        model: MODELS.openai,
        max_tokens: 256,
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools: [weather],
        tool_choice: { type: "tool", name: "get_weather" },
        max_iterations: 2,
      })
      .runUntilDone();
    expect(ran).toBe(1);
    expect(turn).toBe(2);
    expect(final.stop_reason).toBe("end_turn");
  });
});

test("Anthropic's model_context_window_exceeded reaches a Gemini caller as MAX_TOKENS: the answer was cut short", async () => {
  const message = jsonFixture("anthropic-message.json");
  message.stop_reason = "model_context_window_exceeded";
  world.upstreams.anthropic.setBehavior({ message });
  const response = await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "write a lot" });
  expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.MAX_TOKENS);
});
