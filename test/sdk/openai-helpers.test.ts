import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import type { RunnableToolFunctionWithParse } from "openai/lib/RunnableFunction";
import type { JSONSchema } from "openai/lib/jsonschema";
import { expectedOf, expectResultUpstream, MODELS, openAiWeatherTool, startWorld, WEATHER, WEATHER_REPORT, type World } from "./_support.ts";

/**
 * The openai SDK's client-side helpers over translated channels: runTools() runs the tool
 * and sends its result back in the upstream's own format, and a stream helper written out
 * with toReadableStream() (as a server hands it to a browser) reads back whole.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const question = [{ role: "user" as const, content: "What is the weather in Paris?" }];

/** The weather tool as runTools() takes it: it records the arguments it is called with and answers WEATHER_REPORT. */
function weatherRunner(seen: object[] = []): RunnableToolFunctionWithParse<object> {
  return {
    type: "function",
    function: {
      name: WEATHER.name,
      description: WEATHER.description,
      parameters: WEATHER.parameters as unknown as JSONSchema,
      parse: (input) => JSON.parse(input) as object,
      function: (args) => {
        seen.push(args);
        return WEATHER_REPORT;
      },
    },
  };
}

describe("chat.completions.runTools()", () => {
  for (const kind of ["anthropic", "gemini"] as const) {
    test(`${kind} channel: the tool runs on the call's arguments, and its result reaches the upstream as its own format's tool result`, async () => {
      const seen: object[] = [];
      const runner = world.openai.chat.completions.runTools(
        { model: MODELS[kind], messages: question, tools: [weatherRunner(seen)] },
        // The fixtures always call the tool: two rounds are one call and its answer.
        { maxChatCompletions: 2 },
      );
      await runner.done();
      expect(seen[0]).toEqual(expectedOf(kind, "plain", true).tools[0]!.args as object);
      const requests = world.upstreams[kind].requests;
      expect(requests).toHaveLength(2);
      expectResultUpstream(kind, requests[1]!.body, WEATHER.name);
    });
  }

  test("mock channel: the run ends with the model's answer to the result", async () => {
    const runner = world.openai.chat.completions.runTools({ model: MODELS.mock, messages: question, tools: [weatherRunner()] });
    expect(await runner.finalContent()).toContain("light rain");
    expect(runner.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});

describe("stream().toReadableStream(), read back with ChatCompletionStream.fromReadableStream()", () => {
  for (const kind of ["anthropic", "gemini"] as const) {
    test(`${kind} channel: the tool calls whole, ids and all`, async () => {
      const stream = world.openai.chat.completions.stream({ model: MODELS[kind], messages: question, tools: [openAiWeatherTool] });
      const final = await ChatCompletionStream.fromReadableStream(stream.toReadableStream()).finalChatCompletion();
      const calls = final.choices[0]!.message.tool_calls ?? [];
      expect(calls.map((c) => (c.type === "function" ? { name: c.function.name, args: JSON.parse(c.function.arguments) } : null))).toEqual(expectedOf(kind, "stream", true).tools);
      for (const call of calls) expect(call.id).toBeTruthy();
      expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    });
  }
});
