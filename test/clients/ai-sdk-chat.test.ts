import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { generateText, streamText } from "ai";
import { expectedOf, KINDS, MODELS, onlyRequest, startWorld, UPSTREAM_MODELS, type KindName, type World } from "../sdk/_support.ts";
import { AI_CALLERS, modelFor, type AiCaller } from "./_ai-sdk-support.ts";

/**
 * The Vercel AI SDK's generateText and streamText through each of its callers (the openai
 * provider's chat completions and Responses API, the anthropic and google providers) against
 * each upstream kind: the providers parse every answer and chunk with their own schemas, so
 * these prove the gateway's answers pass them with the upstream's text, usage and finish
 * reason intact.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The SDK's usage, in the numbers a caller reads. */
function tokensOf(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number }) {
  return { input: usage.inputTokens, output: usage.outputTokens, total: usage.totalTokens };
}

describe.each(AI_CALLERS.map((c) => [c]))("AI SDK caller %s", (caller: AiCaller) => {
  describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
    const prompt = `Hi from the AI SDK's ${caller} to the ${kind} upstream`;
    const model = () => modelFor(world, caller, MODELS[kind]);

    test("generateText: the upstream's text, usage and finish reason", async () => {
      const result = await generateText({ model: model(), prompt, maxRetries: 0 });
      expect(result.finishReason).toBe("stop");
      expect(result.toolCalls).toEqual([]);
      if (kind === "mock") {
        expect(result.text).toContain(prompt);
        expect(result.usage.inputTokens).toBeGreaterThan(0);
        expect(result.usage.totalTokens).toBe(result.usage.inputTokens! + result.usage.outputTokens!);
        return;
      }
      const expected = expectedOf(kind, "plain");
      expect(result.text).toBe(expected.text);
      expect(tokensOf(result.usage)).toEqual({ input: expected.inputTokens, output: expected.outputTokens, total: expected.inputTokens + expected.outputTokens });
      const received = onlyRequest(world, kind);
      if (kind === "gemini") expect(received.model).toBe(UPSTREAM_MODELS.gemini);
      else expect(received.body.model).toBe(UPSTREAM_MODELS[kind]);
    });

    test("streamText: the same text in several deltas, usage and finish reason at the end", async () => {
      const result = streamText({ model: model(), prompt, maxRetries: 0 });
      const deltas: string[] = [];
      const errors: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") deltas.push(part.text);
        if (part.type === "error") errors.push(part.error);
      }
      expect(errors).toEqual([]);
      expect(deltas.length).toBeGreaterThan(1);
      const text = await result.text;
      expect(deltas.join("")).toBe(text);
      expect(await result.finishReason).toBe("stop");
      const usage = tokensOf(await result.usage);
      if (kind === "mock") {
        // The demo model answers a prompt the same streamed or not.
        const whole = await generateText({ model: model(), prompt, maxRetries: 0 });
        expect(text).toBe(whole.text);
        expect(usage).toEqual(tokensOf(whole.usage));
        return;
      }
      const expected = expectedOf(kind, "stream");
      expect(text).toBe(expected.text);
      expect(usage).toEqual({ input: expected.inputTokens, output: expected.outputTokens, total: expected.inputTokens + expected.outputTokens });
      const received = onlyRequest(world, kind);
      if (kind === "gemini") expect(received.action).toBe("streamGenerateContent");
      else expect(received.body.stream).toBe(true);
    });
  });
});

test.each(AI_CALLERS.map((c) => [c]))("%s: an answer cut at maxOutputTokens finishes as length, whole and streamed", async (caller: AiCaller) => {
  // The demo model stops at the limit, counting a word a token.
  const ask = { model: modelFor(world, caller, MODELS.mock), prompt: "tell me a long story", maxOutputTokens: 3, maxRetries: 0 };
  const whole = await generateText(ask);
  const streamed = streamText(ask);
  for (const result of [whole, { text: await streamed.text, finishReason: await streamed.finishReason, usage: await streamed.usage }]) {
    expect(result.finishReason).toBe("length");
    expect(result.text.split(" ")).toHaveLength(3);
    expect(result.usage.outputTokens).toBe(3);
  }
});
