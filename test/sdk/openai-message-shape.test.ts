import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { MODELS, openAiWeatherTool, startWorld, type World } from "./_support.ts";

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hi = [{ role: "user" as const, content: "hi" }];

describe("translated chat completions carry the fields OpenAI always sends", () => {
  for (const kind of ["anthropic", "gemini", "mock"] as const) {
    test(`${kind} channel: message.refusal is null, not absent, on an ordinary answer (the SDK types it string | null)`, async () => {
      const completion = await world.openai.chat.completions.create({ model: MODELS[kind], messages: hi });
      const message = completion.choices[0]!.message;
      expect(message).toHaveProperty("refusal", null);
      expect(typeof message.content).toBe("string");
    });

    test(`${kind} channel, streamed with include_usage: every chunk but the last has usage null, the last the counts`, async () => {
      const stream = await world.openai.chat.completions.create({ model: MODELS[kind], messages: hi, stream: true, stream_options: { include_usage: true } });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks.slice(0, -1)) expect(chunk).toHaveProperty("usage", null);
      expect(chunks.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
    });
  }

  test("without include_usage, no chunk has a usage field", async () => {
    const stream = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hi, stream: true });
    for await (const chunk of stream) expect("usage" in chunk).toBe(false);
  });
});

test("the mock gives each call of a conversation its own id, so results pair with their calls", async () => {
  const first = await world.openai.chat.completions.create({ model: MODELS.mock, messages: [{ role: "user", content: "weather in Paris?" }], tools: [openAiWeatherTool], tool_choice: "required" });
  const firstCall = first.choices[0]!.message.tool_calls![0]!;
  const second = await world.openai.chat.completions.create({
    model: MODELS.mock,
    messages: [
      { role: "user", content: "weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [firstCall] },
      { role: "tool", tool_call_id: firstCall.id, content: "18C" },
      { role: "user", content: "and in Rome?" },
    ],
    tools: [openAiWeatherTool],
    tool_choice: "required",
  });
  const secondCall = second.choices[0]!.message.tool_calls![0]!;
  expect(secondCall.id).not.toBe(firstCall.id);
});
