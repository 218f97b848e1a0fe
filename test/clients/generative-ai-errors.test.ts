import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { GoogleGenerativeAIFetchError, type GenerativeModel } from "@google/generative-ai";
import { createUserKey, MODELS, REMOTE_KINDS, rejectionOf, startWorld, type RemoteKind, type World } from "../sdk/_support.ts";
import { legacyModel } from "./_legacy-support.ts";

/**
 * The gateway's refusals through Google's legacy SDK: each is its GoogleGenerativeAIFetchError
 * with the status (402 for funds, 429 for a rate limit, 404 for an unknown model), raised by
 * generateContent and by generateContentStream before any chunk, with the message of the
 * spec's error body. A stream that breaks after it began ends with Gemini's error object as
 * its last chunk, which this SDK yields as a chunk without candidates (the genai SDK raises
 * it): its aggregated response then has no finishReason.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The error both calls of `model` raise, checked to be the SDK's fetch error of `status`. */
async function expectRefused(model: GenerativeModel, status: number, message: string) {
  for (const asked of [model.generateContent("Hi"), model.generateContentStream("Hi")]) {
    const error = await rejectionOf(asked);
    expect(error).toBeInstanceOf(GoogleGenerativeAIFetchError);
    expect((error as GoogleGenerativeAIFetchError).status).toBe(status);
    expect((error as GoogleGenerativeAIFetchError).message).toContain(message);
  }
}

test("402: an account without funds", async () => {
  const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 0 });
  await expectRefused(legacyModel(world, MODELS.mock, {}, key), 402, "Insufficient balance");
});

test("429: a key past its requests per minute", async () => {
  const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 100 }, { requests_per_minute: 1 });
  const model = legacyModel(world, MODELS.mock, {}, key);
  expect((await model.generateContent("Hi")).response.text().length).toBeGreaterThan(0);
  await expectRefused(model, 429, "Rate limit");
});

test("404: a model the gateway does not serve", async () => {
  await expectRefused(legacyModel(world, "no-such-model"), 404, "no-such-model");
});

describe.each(REMOTE_KINDS.map((kind) => [kind]))("upstream kind %s", (kind: RemoteKind) => {
  test("a stream the upstream breaks off: the chunks before it, Gemini's error object last, no finishReason", async () => {
    world.upstreams[kind].setBehavior({ cutAfterEvents: kind === "anthropic" ? 5 : 2 });
    const result = await legacyModel(world, MODELS[kind]).generateContentStream("Hi");
    const chunks = [];
    for await (const chunk of result.stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.at(-1)).toMatchObject({ error: { code: 502, status: "UNAVAILABLE" } });
    const response = await result.response;
    expect(response.text().length).toBeGreaterThan(0);
    expect(response.candidates![0]!.finishReason).toBeUndefined();
  });
});
