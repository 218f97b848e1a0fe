import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hello = [{ role: "user" as const, content: "hello" }];

describe("sampling sent to an anthropic channel (Claude Sonnet 4.5 and later refuse temperature and top_p together)", () => {
  test("an OpenAI call that sets neither gets Variant A's temperature, and no top_p: a top_p of 1 changes nothing", async () => {
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello });
    const body = onlyRequest(world, "anthropic").body;
    expect(body.temperature).toBe(0.7);
    expect(body.top_p).toBeUndefined();
  });

  test("a top_p below 1 the caller chose is sent", async () => {
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, top_p: 0.9 });
    expect(onlyRequest(world, "anthropic").body.top_p).toBe(0.9);
  });
});

describe("an Anthropic caller's effort without thinking, on an anthropic channel", () => {
  test("reaches the upstream as the caller sent it, with no thinking added", async () => {
    // The SDK's types no longer list temperature, which the API still takes: spread in untyped.
    const sampling: object = { temperature: 0.3 };
    const message = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 256, messages: hello, ...sampling, output_config: { effort: "low" } });
    expect(message.type).toBe("message");
    const body = onlyRequest(world, "anthropic").body;
    expect(body.output_config).toEqual({ effort: "low" });
    expect(body.thinking).toBeUndefined();
    expect(body.temperature).toBe(0.3);
  });

  test("streamed, the same", async () => {
    await world.anthropic.messages.stream({ model: MODELS.anthropic, max_tokens: 256, messages: hello, output_config: { effort: "high" } }).finalMessage();
    const body = onlyRequest(world, "anthropic").body;
    expect(body.output_config).toEqual({ effort: "high" });
    expect(body.thinking).toBeUndefined();
  });

  test("with the caller's own adaptive thinking, both go as sent", async () => {
    await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 2048, messages: hello, thinking: { type: "adaptive" }, output_config: { effort: "medium" } });
    const body = onlyRequest(world, "anthropic").body;
    expect(body.thinking).toEqual({ type: "adaptive" });
    expect(body.output_config).toEqual({ effort: "medium" });
  });
});
