import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ApiError, type GenerateContentResponse } from "@google/genai";
import { createUserKey, MODELS, onlyRequest, openAiClient, startWorld, UPSTREAM_MODELS, type World } from "./_support.ts";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { sleep } from "../helpers/common.ts";
import {
  ANSWERS,
  fixtureChunks,
  GEMINI_SEVERAL_PLAIN,
  GEMINI_SEVERAL_STREAM,
  geminiAnswerTexts,
  OPENAI_SEVERAL_PLAIN,
  OPENAI_SEVERAL_STREAM,
  openAiAnswerTexts,
  SEVERAL_TEXTS,
} from "../helpers/several-answers.ts";

/**
 * Several answers to one request: OpenAI's `n` and Gemini's `candidateCount`, through the
 * official SDKs. The canonical form carries one answer, so such a request goes only to a
 * channel of the caller's format, by native passthrough, and every answer reaches the caller
 * as the upstream sent it; a model without such a channel is a 400 naming the field, as is a
 * count above the provider's own bound.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const question = [{ role: "user" as const, content: "What is the capital of France?" }];

describe("openai caller, n = 3", () => {
  test("an openai upstream is asked for 3 answers, and all 3 reach the caller as it sent them", async () => {
    world.upstreams.openai.setBehavior({ completion: jsonFixture(OPENAI_SEVERAL_PLAIN) });
    const completion = await world.openai.chat.completions.create({ model: MODELS.openai, messages: question, n: ANSWERS });
    const sent = onlyRequest(world, "openai").body;
    expect(sent.n).toBe(ANSWERS);
    expect(sent.model).toBe(UPSTREAM_MODELS.openai);
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    expect(openAiAnswerTexts([completion])).toEqual(SEVERAL_TEXTS.openai.plain);
    expect(completion.choices).toEqual(jsonFixture(OPENAI_SEVERAL_PLAIN).choices);
    expect(completion.model).toBe(MODELS.openai);
  });

  test("streamed, the choices interleaved and choice 0 finishing first: every chunk reaches the caller as the upstream sent it", async () => {
    world.upstreams.openai.setBehavior({ streamFixture: OPENAI_SEVERAL_STREAM });
    const stream = await world.openai.chat.completions.create({ model: MODELS.openai, messages: question, n: ANSWERS, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(onlyRequest(world, "openai").body.n).toBe(ANSWERS);
    const upstreamChunks = fixtureChunks(OPENAI_SEVERAL_STREAM);
    expect(chunks.map((chunk) => chunk.choices)).toEqual(upstreamChunks.map((chunk) => chunk.choices));
    expect(openAiAnswerTexts(chunks)).toEqual(SEVERAL_TEXTS.openai.stream);
    const finished = chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.finish_reason).map((choice) => choice.index));
    expect(finished).toEqual([0, 2, 1]);
    expect(chunks.at(-1)!.usage).toEqual(upstreamChunks.at(-1).usage);
  });

  test("n = 1 is served by any channel, as before", async () => {
    const completion = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question, n: 1 });
    expect(completion.choices).toHaveLength(1);
    expect(onlyRequest(world, "anthropic").body.n).toBeUndefined();
  });

  test.each([MODELS.anthropic, MODELS.gemini, MODELS.mock])("a model with no openai channel (%s): 400 naming n, and no upstream call", async (model) => {
    for (const stream of [false, true]) {
      const error = await world.openai.chat.completions.create({ model, messages: question, n: ANSWERS, stream }).catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toEqual({ message: expect.stringContaining("n (3 answers)"), type: "invalid_request_error", code: 400 });
      expect(error.message).toContain("openai");
    }
    expect(world.upstreams.anthropic.requests.length + world.upstreams.gemini.requests.length).toBe(0);
  });

  test("n above OpenAI's bound of 128: 400 naming n, and no upstream call", async () => {
    const error = await world.openai.chat.completions.create({ model: MODELS.openai, messages: question, n: 129 }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("Invalid 'n': must be an integer from 1 to 128");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("the tokens-per-minute reservation counts every answer: 429 where one answer fits and three do not", async () => {
    const { key } = await createUserKey(world.gw, { plan: "pro", balance: 10 }, { tokens_per_minute: 100, requests_per_minute: 1000 });
    const client = openAiClient(world.gw, key);
    // Two prompt tokens plus 40 output tokens an answer. The first answer uses 43 (the
    // upstream's usage) of 100: 42 more fit in what is left, 122 do not.
    const ask = { model: MODELS.openai, messages: [{ role: "user" as const, content: "Capital?" }], max_tokens: 40 };
    await client.chat.completions.create(ask);
    world.reset();
    const error = await client.chat.completions.create({ ...ask, n: ANSWERS }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.message).toContain("tokens per minute");
    expect(world.upstreams.openai.requests).toHaveLength(0);
    expect((await client.chat.completions.create(ask)).choices).toHaveLength(1);
  });
});

describe("genai caller, candidateCount = 3", () => {
  const config = { candidateCount: ANSWERS };

  test("a gemini upstream is asked for 3 candidates, and all 3 reach the caller as it sent them", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture(GEMINI_SEVERAL_PLAIN) });
    const response = await world.genai.models.generateContent({ model: MODELS.gemini, contents: "What is the capital of France?", config });
    const sent = onlyRequest(world, "gemini");
    expect(sent.model).toBe(UPSTREAM_MODELS.gemini);
    expect(sent.body.generationConfig.candidateCount).toBe(ANSWERS);
    expect(response.candidates).toHaveLength(ANSWERS);
    expect(geminiAnswerTexts([response])).toEqual(SEVERAL_TEXTS.gemini.plain);
    expect(response.candidates!.map((candidate) => String(candidate.finishReason))).toEqual(["STOP", "STOP", "STOP"]);
  });

  test("streamed, candidate 0 finishing first: every candidate's text reaches the caller", async () => {
    world.upstreams.gemini.setBehavior({ streamFixture: GEMINI_SEVERAL_STREAM });
    const stream = await world.genai.models.generateContentStream({ model: MODELS.gemini, contents: "What is the capital of France?", config });
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(onlyRequest(world, "gemini").body.generationConfig.candidateCount).toBe(ANSWERS);
    expect(chunks).toHaveLength(fixtureChunks(GEMINI_SEVERAL_STREAM).length);
    expect(geminiAnswerTexts(chunks)).toEqual(SEVERAL_TEXTS.gemini.stream);
    expect(chunks.at(-1)!.usageMetadata).toEqual(fixtureChunks(GEMINI_SEVERAL_STREAM).at(-1).usageMetadata);
  });

  test("streamed: what the other candidates send after candidate 0 finished reaches the caller as it comes, not held to the stream's end", async () => {
    const chunks = fixtureChunks(GEMINI_SEVERAL_STREAM);
    // The second chunk finishes candidate 0; the third is candidate 2's alone.
    const [before, after] = [chunks.slice(0, 3), chunks.slice(3)];
    let seenByCaller!: () => void;
    const seen = new Promise<string>((resolve) => (seenByCaller = () => resolve("the caller")));
    // The upstream sends the rest once the caller has the third chunk, or after 3 s in any case.
    const gate = Promise.race([seen, sleep(3_000).then(() => "the timer")]);
    world.upstreams.gemini.setBehavior({ script: () => gatedSse(before, gate, after) });
    const stream = await world.genai.models.generateContentStream({ model: MODELS.gemini, contents: "What is the capital of France?", config });
    const received: GenerateContentResponse[] = [];
    for await (const chunk of stream) {
      received.push(chunk);
      if (received.length === before.length) seenByCaller();
    }
    expect(await gate).toBe("the caller");
    expect(geminiAnswerTexts(received)).toEqual(SEVERAL_TEXTS.gemini.stream);
  });

  test.each([MODELS.openai, MODELS.anthropic, MODELS.mock])("a model with no gemini channel (%s): 400 naming candidateCount, and no upstream call", async (model) => {
    const error = await world.genai.models.generateContent({ model, contents: "Capital of France?", config }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("generationConfig.candidateCount (3 answers)");
    expect(world.upstreams.openai.requests.length + world.upstreams.anthropic.requests.length).toBe(0);
  });

  test("candidateCount above Gemini's documented 8: 400, and no upstream call", async () => {
    const error = await world.genai.models.generateContent({ model: MODELS.gemini, contents: "Capital of France?", config: { candidateCount: 9 } }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("Invalid 'generationConfig.candidateCount': must be an integer from 1 to 8");
    expect(world.upstreams.gemini.requests).toHaveLength(0);
  });

  test("a token count does not depend on how many answers the request asks for: counted on an openai-only model", async () => {
    const response = await world.gw.fetch(`/v1beta/models/${MODELS.openai}:countTokens?key=${world.key}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ generateContentRequest: { model: "models/x", contents: [{ role: "user", parts: [{ text: "Capital of France?" }] }], generationConfig: config } }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).totalTokens).toBeGreaterThan(0);
  });
});

/** A Gemini SSE response that sends `before`, waits for `gate`, then sends `after` and ends. */
function gatedSse(before: unknown[], gate: Promise<unknown>, after: unknown[]): Response {
  const encoder = new TextEncoder();
  const event = (chunk: unknown) => encoder.encode(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const chunk of before) controller.enqueue(event(chunk));
      await gate;
      for (const chunk of after) controller.enqueue(event(chunk));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}
