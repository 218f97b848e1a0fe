import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { APICallError, generateText, streamText } from "ai";
import { createUserKey, MODELS, REMOTE_KINDS, rejectionOf, startWorld, type RemoteKind, type World } from "../sdk/_support.ts";
import { AI_CALLERS, modelFor, type AiCaller } from "./_ai-sdk-support.ts";

/**
 * The gateway's refusals and an upstream's through the AI SDK: each provider turns a non-2xx
 * answer into an APICallError with its status, whole or streamed (a stream refused before it
 * began reaches streamText's onError), and says whether to retry as it would for the provider.
 */

let world: World;
let brokeKey: string;
beforeAll(async () => {
  world = await startWorld();
  brokeKey = (await createUserKey(world.gw, { plan: "enterprise", balance: 0 })).key;
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The error generateText rejects with, and the one streamText hands its onError. */
async function errorsOf(ask: Parameters<typeof generateText>[0]): Promise<{ whole: any; streamed: any }> {
  const whole = await rejectionOf(generateText(ask));
  let streamed: unknown;
  await streamText({ ...ask, onError: ({ error }) => void (streamed = error) }).consumeStream();
  return { whole, streamed };
}

describe.each(AI_CALLERS.map((c) => [c]))("AI SDK caller %s", (caller: AiCaller) => {
  test("402: a zero balance is an APICallError with status 402, not retried", async () => {
    const { whole, streamed } = await errorsOf({ model: modelFor(world, caller, MODELS.mock, brokeKey), prompt: "Hello", maxRetries: 0 });
    for (const error of [whole, streamed]) {
      expect(APICallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ statusCode: 402, isRetryable: false });
      expect(error.message).toContain("Insufficient balance");
    }
  });

  test.each(REMOTE_KINDS.map((k) => [k]))("429 from the %s upstream: status 429, retryable, with a retry-after", async (kind: RemoteKind) => {
    world.upstreams[kind].setBehavior({ status: 429, headers: { "retry-after": "3" } });
    // After the first 429 the gateway skips the channel for the Retry-After, and answers its own 429 meanwhile.
    const { whole, streamed } = await errorsOf({ model: modelFor(world, caller, MODELS[kind]), prompt: "Hello", maxRetries: 0 });
    for (const error of [whole, streamed]) {
      expect(APICallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ statusCode: 429, isRetryable: true });
      expect(Number(error.responseHeaders["retry-after"])).toBeWithin(1, 4);
    }
  });
});
