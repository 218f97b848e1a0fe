import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { anthropicErrorBody, startAnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { geminiErrorBody, startGeminiUpstream } from "../helpers/gemini-upstream.ts";
import { startOpenAiUpstream } from "../helpers/openai-upstream.ts";
import { ownModels, rejectionOf, startWorld, type World } from "./_support.ts";

/**
 * An upstream that says it is overloaded (Anthropic's 529 overloaded_error, Gemini's and
 * OpenAI's 503) is the caller's 503, with the upstream's Retry-After: what Gemini answers
 * itself (the genai SDK's ApiError 503 UNAVAILABLE) and the nearest standard status to
 * Anthropic's. It was a 502, which told a caller's retry code the gateway had broken.
 */

let world: World;
const models = ownModels("overloaded");
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world.close();
  await models.close();
});

/** A model served by one channel of `type` whose upstream is `upstream`; each its own breaker state. */
const modelOn = async (type: string, upstream: { url: string; close(): Promise<void> }): Promise<string> => (await models.on(world, type, upstream)).model;

const hi = [{ role: "user" as const, content: "hi" }];

describe("an anthropic upstream's 529 overloaded_error", () => {
  const overloaded = () => startAnthropicUpstream({ status: 529, errorBody: anthropicErrorBody(529), headers: { "retry-after": "7" } });

  test("anthropic SDK: ServiceUnavailableError 503, the upstream's Retry-After", async () => {
    const model = await modelOn("anthropic", await overloaded());
    const error = await rejectionOf(world.anthropic.messages.create({ model, max_tokens: 20, messages: hi }));
    expect(error).toBeInstanceOf(Anthropic.ServiceUnavailableError);
    expect(error.status).toBe(503);
    expect(error.headers.get("retry-after")).toBe("7");
  });

  test("openai SDK: InternalServerError 503", async () => {
    const model = await modelOn("anthropic", await overloaded());
    const error = await rejectionOf(world.openai.chat.completions.create({ model, messages: hi }));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(503);
  });
});

test("a gemini upstream's 503 is the genai SDK's ApiError 503 UNAVAILABLE, as Gemini's own", async () => {
  const model = await modelOn("gemini", await startGeminiUpstream({ status: 503, errorBody: geminiErrorBody(503) }));
  const error = await rejectionOf(world.genai.models.generateContent({ model, contents: "hi" }));
  expect(error).toBeInstanceOf(ApiError);
  expect(error.status).toBe(503);
  expect(JSON.parse(error.message).error.status).toBe("UNAVAILABLE");
});

test("an openai upstream's 503, streamed: the SDK's 503 before the stream starts", async () => {
  const model = await modelOn("openai", await startOpenAiUpstream({ status: 503 }));
  const error = await rejectionOf(world.openai.chat.completions.create({ model, messages: hi, stream: true }));
  expect(error).toBeInstanceOf(OpenAI.InternalServerError);
  expect(error.status).toBe(503);
});

test("an anthropic stream whose first event is overloaded_error: 503 for the anthropic SDK's stream helper", async () => {
  const upstream = await startAnthropicUpstream({
    script: () =>
      new Response(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(529))}\n\n`, { headers: { "content-type": "text/event-stream" } }),
  });
  const model = await modelOn("anthropic", upstream);
  const error = await rejectionOf(world.anthropic.messages.stream({ model, max_tokens: 20, messages: hi }).finalMessage());
  expect(error).toBeInstanceOf(Anthropic.ServiceUnavailableError);
  expect(error.status).toBe(503);
});

test("any other upstream fault is still the gateway's 502", async () => {
  const model = await modelOn("anthropic", await startAnthropicUpstream({ status: 500, errorBody: anthropicErrorBody(500) }));
  const error = await rejectionOf(world.anthropic.messages.create({ model, max_tokens: 20, messages: hi }));
  expect(error).toBeInstanceOf(Anthropic.InternalServerError);
  expect(error.status).toBe(502);
});
