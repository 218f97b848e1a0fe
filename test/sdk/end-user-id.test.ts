import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MODELS, onlyRequest, startWorld, type World, warningsOf } from "./_support.ts";

/**
 * The caller's id for its end user, which providers use to tell an abusive user from the
 * application that serves them: OpenAI's `user` (and its newer `safety_identifier`),
 * Anthropic's `metadata.user_id`. Each reaches an upstream of the other format in that
 * format's field; Gemini has none, so the warning header names it.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hello = [{ role: "user" as const, content: "Hello" }];

describe("anthropic caller: metadata.user_id", () => {
  test("reaches an openai upstream as user, with no warning", async () => {
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 50, messages: hello, metadata: { user_id: "user-7f3a" } })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "openai").body;
    expect(body.user).toBe("user-7f3a");
    expect(body).not.toHaveProperty("metadata");
  });

  test("streamed, the same", async () => {
    await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 50, messages: hello, metadata: { user_id: "user-7f3a" } }).finalMessage();
    expect(onlyRequest(world, "openai").body.user).toBe("user-7f3a");
  });

  test("a gemini upstream, which has no such field: named in the warnings", async () => {
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.gemini, max_tokens: 50, messages: hello, metadata: { user_id: "user-7f3a" } })
      .withResponse();
    expect(warningsOf(response)).toContain("metadata.user_id: not passed on");
    expect(JSON.stringify(onlyRequest(world, "gemini").body)).not.toContain("user-7f3a");
  });

  test("an anthropic upstream gets metadata as sent", async () => {
    await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 50, messages: hello, metadata: { user_id: "user-7f3a" } });
    expect(onlyRequest(world, "anthropic").body.metadata).toEqual({ user_id: "user-7f3a" });
  });
});

describe("openai caller: user and safety_identifier", () => {
  test("user reaches an anthropic upstream as metadata.user_id, with no warning", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, user: "user-7f3a" }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "anthropic").body;
    expect(body.metadata).toEqual({ user_id: "user-7f3a" });
    expect(body).not.toHaveProperty("user");
  });

  test("safety_identifier reaches an anthropic upstream as metadata.user_id, streamed too", async () => {
    const stream = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, safety_identifier: "hash-91c2", stream: true });
    for await (const _ of stream);
    expect(onlyRequest(world, "anthropic").body.metadata).toEqual({ user_id: "hash-91c2" });
  });

  test("both, and different: safety_identifier is the one sent, and user is named as not passed on", async () => {
    const { response } = await world.openai.chat.completions
      .create({ model: MODELS.anthropic, messages: hello, user: "user-7f3a", safety_identifier: "hash-91c2" })
      .withResponse();
    expect(onlyRequest(world, "anthropic").body.metadata).toEqual({ user_id: "hash-91c2" });
    expect(warningsOf(response)).toContain("user: not passed on");
    expect(warningsOf(response)).not.toContain("safety_identifier");
  });

  test("a gemini upstream: named in the warnings", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: hello, user: "user-7f3a" }).withResponse();
    expect(warningsOf(response)).toContain("user: not passed on");
    expect(JSON.stringify(onlyRequest(world, "gemini").body)).not.toContain("user-7f3a");
  });

  test("an openai upstream gets both as sent", async () => {
    await world.openai.chat.completions.create({ model: MODELS.openai, messages: hello, user: "user-7f3a", safety_identifier: "hash-91c2" });
    const body = onlyRequest(world, "openai").body;
    expect(body.user).toBe("user-7f3a");
    expect(body.safety_identifier).toBe("hash-91c2");
  });
});

describe("openai SDK, responses.create: user and safety_identifier, as chat's", () => {
  test("safety_identifier reaches an anthropic upstream as metadata.user_id; a different user is named as not passed on", async () => {
    const { response } = await world.openai.responses.create({ model: MODELS.anthropic, input: "Hello", store: false, user: "user-7f3a", safety_identifier: "hash-91c2" }).withResponse();
    expect(onlyRequest(world, "anthropic").body.metadata).toEqual({ user_id: "hash-91c2" });
    expect(warningsOf(response)).toContain("user: not passed on");
    expect(warningsOf(response)).not.toContain("safety_identifier");
  });

  test("user reaches an openai upstream as user, and a gemini upstream's warnings name it", async () => {
    await world.openai.responses.create({ model: MODELS.openai, input: "Hello", user: "user-7f3a" });
    expect(onlyRequest(world, "openai").body.user).toBe("user-7f3a");
    const { response } = await world.openai.responses.create({ model: MODELS.gemini, input: "Hello", user: "user-7f3a" }).withResponse();
    expect(warningsOf(response)).toContain("user: not passed on");
    expect(JSON.stringify(onlyRequest(world, "gemini").body)).not.toContain("user-7f3a");
  });
});
