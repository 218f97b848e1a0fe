import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { MODELS, onlyRequest, openAiWeatherTool, startWorld, type World } from "./_support.ts";

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

describe("a conversation of system messages alone, which OpenAI answers", () => {
  const instructions = [{ role: "system" as const, content: "Write a haiku about the sea." }];

  test("anthropic channel: its text is the one user turn, no system prompt beside it, and the warning says so", async () => {
    const { data, response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: instructions }).withResponse();
    expect(data.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.system).toBeUndefined();
    expect(sent.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Write a haiku about the sea." }] }]);
    expect(response.headers.get("x-gateway-warnings")).toContain("system messages alone");
  });

  test("gemini channel, streamed: its text is the one user content", async () => {
    const stream = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: instructions, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.length).toBeGreaterThan(0);
    const sent = onlyRequest(world, "gemini").body;
    expect(sent.systemInstruction).toBeUndefined();
    expect(sent.contents).toEqual([{ role: "user", parts: [{ text: "Write a haiku about the sea." }] }]);
  });

  test("a system prompt beside a turn stays the system prompt", async () => {
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: [...instructions, { role: "user", content: "Now." }] });
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.system).toBe("Write a haiku about the sea.");
    expect(sent.messages).toHaveLength(1);
  });
});
