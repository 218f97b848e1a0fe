import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type Anthropic from "@anthropic-ai/sdk";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * Translated messages answers carry the usage counts Anthropic always sends. The SDK types
 * cache_read_input_tokens and cache_creation_input_tokens as `number | null`, never absent,
 * and Anthropic sends 0 when nothing was cached: code that adds them to input_tokens (what a
 * cost tracker does) read undefined and summed to NaN through the gateway.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const ask = { max_tokens: 200, messages: [{ role: "user" as const, content: "hi" }] };

/** Every prompt token of an Anthropic usage, as a cost tracker adds them up. */
const promptTokens = (usage: Anthropic.Usage | Anthropic.MessageDeltaUsage) =>
  (usage.input_tokens ?? 0) + usage.cache_read_input_tokens! + usage.cache_creation_input_tokens!;

describe("translated messages answers carry Anthropic's cache counts, 0 when nothing was cached", () => {
  for (const kind of ["openai", "gemini", "mock"] as const) {
    test(`${kind} channel: the message's usage`, async () => {
      const message = await world.anthropic.messages.create({ model: MODELS[kind], ...ask });
      expect(message.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
      expect(promptTokens(message.usage)).toBe(message.usage.input_tokens);
    });

    test(`${kind} channel, streamed: message_start's and message_delta's usage, and finalMessage()'s`, async () => {
      const stream = world.anthropic.messages.stream({ model: MODELS[kind], ...ask });
      const usages: Record<string, unknown>[] = [];
      // The SDK's snapshot is message_start's message itself: copy the usage as it came.
      stream.on("streamEvent", (event) => {
        if (event.type === "message_start") usages.push({ ...event.message.usage });
        if (event.type === "message_delta") usages.push({ ...event.usage });
      });
      const final = await stream.finalMessage();
      expect(usages).toHaveLength(2);
      for (const usage of usages) expect(usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
      expect(final.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
      expect(Number.isNaN(promptTokens(final.usage))).toBe(false);
    });
  }

  test("an openai upstream's cached prompt tokens are cache_read_input_tokens, outside input_tokens, as Anthropic counts them", async () => {
    const completion = jsonFixture("openai-chat-completion.json");
    completion.usage.prompt_tokens_details = { cached_tokens: 20 };
    world.upstreams.openai.setBehavior({ completion });
    const message = await world.anthropic.messages.create({ model: MODELS.openai, ...ask });
    expect(message.usage).toMatchObject({ input_tokens: completion.usage.prompt_tokens - 20, cache_read_input_tokens: 20, cache_creation_input_tokens: 0 });
    expect(promptTokens(message.usage)).toBe(completion.usage.prompt_tokens);
  });
});
