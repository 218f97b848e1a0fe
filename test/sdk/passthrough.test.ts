import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

/**
 * Issue 3 item 2: "when caller format equals the upstream's, the body is passed through
 * untouched apart from model mapping, so unknown fields survive". A field the gateway does
 * not model must still reach a same-format upstream. (Written as a spec: passthrough may not
 * be implemented yet.)
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

describe("anthropic caller -> anthropic upstream", () => {
  test("metadata.user_id reaches the upstream body", async () => {
    const message = await world.anthropic.messages.create({
      model: MODELS.anthropic,
      max_tokens: 64,
      messages: [{ role: "user", content: "Hello" }],
      metadata: { user_id: "u1" },
    });
    expect(message.type).toBe("message");
    const body = onlyRequest(world, "anthropic").body;
    expect(body.metadata).toEqual({ user_id: "u1" });
  });

  test("an unknown top-level field (x_custom) reaches the upstream body, and the model is still mapped", async () => {
    await world.anthropic.messages.create({
      model: MODELS.anthropic,
      max_tokens: 64,
      messages: [{ role: "user", content: "Hello" }],
      x_custom: 1,
    } as any);
    const body = onlyRequest(world, "anthropic").body;
    expect(body.model).toBe("claude-3-5-haiku-20241022");
    expect(body.x_custom).toBe(1);
  });

  test("streamed: metadata reaches the upstream body", async () => {
    const stream = world.anthropic.messages.stream({
      model: MODELS.anthropic,
      max_tokens: 64,
      messages: [{ role: "user", content: "Hello" }],
      metadata: { user_id: "u1" },
    });
    await stream.finalMessage();
    const body = onlyRequest(world, "anthropic").body;
    expect(body.stream).toBe(true);
    expect(body.metadata).toEqual({ user_id: "u1" });
  });

  test("the caller's max_tokens is sent as given", async () => {
    await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 77, messages: [{ role: "user", content: "Hello" }] });
    expect(onlyRequest(world, "anthropic").body.max_tokens).toBe(77);
  });
});

describe("the same rule for the other two formats", () => {
  test("openai caller -> openai upstream: `user` and an unknown field survive", async () => {
    await world.openai.chat.completions.create({
      model: MODELS.openai,
      messages: [{ role: "user", content: "Hello" }],
      user: "u1",
      x_custom: 1,
    } as any);
    const body = onlyRequest(world, "openai").body;
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.user).toBe("u1");
    expect(body.x_custom).toBe(1);
  });

  test("genai caller -> gemini upstream: safetySettings survive", async () => {
    const safetySettings = [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }];
    await world.genai.models.generateContent({
      model: MODELS.gemini,
      contents: "Hello",
      config: { safetySettings: safetySettings as any },
    });
    const received = onlyRequest(world, "gemini");
    expect(received.model).toBe("gemini-2.0-flash");
    expect(received.body.safetySettings).toEqual(safetySettings);
  });
});
