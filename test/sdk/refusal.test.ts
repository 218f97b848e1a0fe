import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * An OpenAI model that refuses answers with `refusal` text instead of `content`, and
 * finish_reason "stop". Callers of the other formats get the refusal's text as the answer and
 * their own refusal stop: Anthropic's "refusal", Gemini's SAFETY.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const REFUSAL = "I'm sorry, I can't help with that.";
const refusingCompletion = {
  id: "chatcmpl-DfR8kQ2wZ5nM1pV7sT3yH9gJ4cL6",
  object: "chat.completion",
  created: 1763715600,
  model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, message: { role: "assistant", content: null, refusal: REFUSAL }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 18, completion_tokens: 9, total_tokens: 27 },
};
const question = [{ role: "user" as const, content: "Something off-limits" }];

test("anthropic caller: the refusal's text, and stop_reason refusal", async () => {
  world.upstreams.openai.setBehavior({ completion: refusingCompletion });
  const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 100, messages: question });
  expect(message.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual([REFUSAL]);
  expect(message.stop_reason).toBe("refusal");
});

test("anthropic caller, streamed: the refusal's deltas as text, and stop_reason refusal", async () => {
  world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-refusal.sse" });
  const message = await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: question }).finalMessage();
  expect(message.content.map((b) => (b.type === "text" ? b.text : b.type)).join("")).toBe(REFUSAL);
  expect(message.stop_reason).toBe("refusal");
});

test("genai caller: the refusal's text, and finishReason SAFETY", async () => {
  world.upstreams.openai.setBehavior({ completion: refusingCompletion });
  const response = await world.genai.models.generateContent({ model: MODELS.openai, contents: "Something off-limits" });
  expect(response.text).toBe(REFUSAL);
  expect(response.candidates?.[0]?.finishReason).toBe("SAFETY" as any);
});
