import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { generateText, streamText } from "ai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { MODELS, startWorld, type World } from "../sdk/_support.ts";
import { modelFor, type AiCaller } from "./_ai-sdk-support.ts";

/**
 * An upstream's thinking through the AI SDK, where the caller's provider shows it when asked:
 * Anthropic's thinking blocks (the anthropic upstream's thinking fixtures) as the SDK's
 * reasoning, whole and streamed, through the anthropic provider with thinking on, the
 * Responses API with a reasoning summary asked for, and the google provider with
 * includeThoughts. (The openai provider's chat completions read no thinking from any
 * server, so it has none to show.)
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => {
  world.reset();
  world.upstreams.anthropic.setBehavior({ message: jsonFixture("anthropic-thinking-message.json"), streamFixture: "anthropic-thinking-stream.sse" });
});

const THOUGHT = "27 is 3 cubed, so its cube root is 3.";
const ANSWER = "The cube root of 27 is 3.";

/** How each provider's users ask to see the model's thinking. */
const ASKING: Record<Exclude<AiCaller, "openai.chat">, Record<string, any>> = {
  // forceReasoning: the provider sends reasoning settings only to models it knows to reason.
  "openai.responses": { openai: { forceReasoning: true, reasoningEffort: "medium", reasoningSummary: "auto" } },
  anthropic: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
  google: { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } } },
};

test.each(Object.keys(ASKING).map((c) => [c]))("%s: the thinking as reasoning before the answer, whole and streamed", async (caller) => {
  const ask = { model: modelFor(world, caller as AiCaller, MODELS.anthropic), prompt: "What is the cube root of 27?", providerOptions: ASKING[caller as keyof typeof ASKING], maxRetries: 0 };
  const whole = await generateText(ask);
  expect({ reasoning: whole.reasoningText, text: whole.text, finish: whole.finishReason }).toEqual({ reasoning: THOUGHT, text: ANSWER, finish: "stop" });
  const streamed = streamText(ask);
  const order: string[] = [];
  for await (const part of streamed.fullStream) if (part.type === "reasoning-delta" || part.type === "text-delta") order.push(part.type);
  expect(order.indexOf("text-delta")).toBeGreaterThan(order.lastIndexOf("reasoning-delta"));
  expect({ reasoning: await streamed.reasoningText, text: await streamed.text }).toEqual({ reasoning: THOUGHT, text: ANSWER });
  // Anthropic counts the thinking inside output_tokens.
  expect((await streamed.usage).outputTokens).toBe(whole.usage.outputTokens!);
  // Each asked the upstream to think.
  for (const request of world.upstreams.anthropic.requests) expect(request.body.thinking).toBeDefined();
});
