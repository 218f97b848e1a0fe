import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { tokenLimitField } from "../../src/translate/openai-chat/reasoning-model.ts";
import { createChannel, onlyRequest, startWorld, UPSTREAM_KEYS, type World } from "./_support.ts";

/**
 * OpenAI's reasoning models refuse `max_tokens` and want `max_completion_tokens`; other
 * OpenAI-compatible servers know only `max_tokens`. A translated request names the limit the
 * way its upstream model takes it; an OpenAI caller's own body keeps the name it used.
 */

let world: World;
const REASONING = "tl-reasoning";
beforeAll(async () => {
  world = await startWorld();
  await createChannel(world.gw, {
    name: "openai reasoning",
    type: "openai",
    base_url: world.upstreams.openai.url,
    api_key: UPSTREAM_KEYS.openai,
    models: [REASONING],
    model_map: { [REASONING]: "gpt-5-mini" },
  });
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const sentLimit = () => {
  const body = onlyRequest(world, "openai").body;
  return { max_tokens: body.max_tokens, max_completion_tokens: body.max_completion_tokens };
};

describe("which name a translated request uses", () => {
  test.each<[string, ReturnType<typeof tokenLimitField>]>([
    ["o1", "max_completion_tokens"],
    ["o3-mini", "max_completion_tokens"],
    ["o4-mini-2025-04-16", "max_completion_tokens"],
    ["gpt-5", "max_completion_tokens"],
    ["gpt-5.1", "max_completion_tokens"],
    ["GPT-5-nano", "max_completion_tokens"],
    ["gpt-4o-mini", "max_tokens"],
    ["gpt-4.1", "max_tokens"],
    ["omni-moderation-latest", "max_tokens"],
    ["openai/gpt-5", "max_tokens"],
    ["deepseek-chat", "max_tokens"],
  ])("%s → %s", (model, field) => {
    expect(tokenLimitField(model)).toBe(field);
  });
});

describe("over a real openai upstream", () => {
  test("an Anthropic caller's max_tokens reaches gpt-5-mini as max_completion_tokens only", async () => {
    await world.anthropic.messages.create({ model: REASONING, max_tokens: 300, messages: [{ role: "user", content: "Hello" }] });
    expect(sentLimit()).toEqual({ max_tokens: undefined, max_completion_tokens: 300 });
  });

  test("a Responses caller's max_output_tokens reaches gpt-5-mini as max_completion_tokens only", async () => {
    await world.openai.responses.create({ model: REASONING, input: "Hello", max_output_tokens: 200 });
    expect(sentLimit()).toEqual({ max_tokens: undefined, max_completion_tokens: 200 });
  });

  test("a genai caller's maxOutputTokens reaches gpt-4o-mini as max_tokens, which every compatible server takes", async () => {
    await world.genai.models.generateContent({ model: "sdk-gpt", contents: "Hello", config: { maxOutputTokens: 77 } });
    expect(sentLimit()).toEqual({ max_tokens: 77, max_completion_tokens: undefined });
  });

  test("an OpenAI caller without a limit gets Variant A's default of 4096 under the reasoning model's name, and not its default temperature and top_p, which the model refuses", async () => {
    await world.openai.chat.completions.create({ model: REASONING, messages: [{ role: "user", content: "Hello" }] });
    expect(sentLimit()).toEqual({ max_tokens: undefined, max_completion_tokens: 4096 });
    const body = onlyRequest(world, "openai").body;
    expect([body.temperature, body.top_p]).toEqual([undefined, undefined]);
  });

  test("an Anthropic caller's stop sequences do not reach a reasoning model, which refuses `stop`, and the caller is told", async () => {
    const response = await world.anthropic.messages
      .create({ model: REASONING, max_tokens: 100, stop_sequences: ["END"], messages: [{ role: "user", content: "Hello" }] })
      .withResponse();
    expect(onlyRequest(world, "openai").body.stop).toBeUndefined();
    expect(response.response.headers.get("x-gateway-warnings")).toContain("stop: not supported by the upstream model");
  });

  test("an OpenAI caller's own stop reaches a reasoning model as sent: the model's answer to it is OpenAI's", async () => {
    await world.openai.chat.completions.create({ model: REASONING, stop: ["END"], messages: [{ role: "user", content: "Hello" }] });
    expect(onlyRequest(world, "openai").body.stop).toEqual(["END"]);
  });

  test("a caller's own temperature and top_p reach a reasoning model: what the model makes of them is its answer", async () => {
    await world.openai.chat.completions.create({ model: REASONING, temperature: 1, top_p: 0.9, messages: [{ role: "user", content: "Hello" }] });
    const body = onlyRequest(world, "openai").body;
    expect([body.temperature, body.top_p]).toEqual([1, 0.9]);
  });

  test("other models still get Variant A's defaults: temperature 0.7, top_p 1, max_tokens 4096", async () => {
    await world.openai.chat.completions.create({ model: "sdk-gpt", messages: [{ role: "user", content: "Hello" }] });
    const body = onlyRequest(world, "openai").body;
    expect([body.temperature, body.top_p, body.max_tokens, body.max_completion_tokens]).toEqual([0.7, 1, 4096, undefined]);
  });

  test("an OpenAI caller's own max_tokens goes as sent, even to a reasoning model: the body is theirs", async () => {
    await world.openai.chat.completions.create({ model: REASONING, max_tokens: 50, messages: [{ role: "user", content: "Hello" }] });
    expect(sentLimit()).toEqual({ max_tokens: 50, max_completion_tokens: undefined });
  });
});
