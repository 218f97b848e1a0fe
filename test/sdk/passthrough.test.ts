import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MODELS, UPSTREAM_MODELS, onlyRequest, startWorld, type World } from "./_support.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";

/**
 * Issue 3 item 2: "when caller format equals the upstream's, the body is passed through
 * untouched apart from model mapping, so unknown fields survive". A field the gateway does
 * not model must still reach a same-format upstream.
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

  test("openai caller -> openai upstream: max_completion_tokens is sent without a max_tokens, which reasoning models refuse", async () => {
    await world.openai.chat.completions.create({ model: MODELS.openai, max_completion_tokens: 256, temperature: 1, messages: [{ role: "user", content: "Hello" }] });
    const body = onlyRequest(world, "openai").body;
    expect(body.max_completion_tokens).toBe(256);
    expect("max_tokens" in body).toBe(false);
    expect(body.temperature).toBe(1);
  });

  test("openai caller -> openai upstream: a caller who sends both limits gets both as sent", async () => {
    await world.openai.chat.completions.create({ model: MODELS.openai, max_completion_tokens: 256, max_tokens: 100, messages: [{ role: "user", content: "Hello" }] });
    const body = onlyRequest(world, "openai").body;
    expect([body.max_completion_tokens, body.max_tokens]).toEqual([256, 100]);
  });

  test("openai caller -> openai upstream, streamed: stream_options fields besides include_usage survive (include_obfuscation)", async () => {
    const stream = await world.openai.chat.completions.create({
      model: MODELS.openai,
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
    });
    for await (const _chunk of stream);
    expect(onlyRequest(world, "openai").body.stream_options).toEqual({ include_usage: true, include_obfuscation: false });
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

/**
 * The response side of native passthrough: what a same-format upstream sends reaches the
 * caller as it came, the model name aside (the caller's, as in every translated response).
 */
const SSE_EVENT_SEPARATOR = "\n\n";

/** POSTs to the gateway with the world's key and returns the raw SSE text. */
async function rawStream(path: string, body: unknown): Promise<string> {
  const response = await world.gw.fetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${world.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response.text();
}

/** The JSON data of each event of an SSE text, `[DONE]` left out. */
function eventData(raw: string): any[] {
  return raw
    .split(SSE_EVENT_SEPARATOR)
    .map((event) => event.split("\n").find((line) => line.startsWith("data: "))?.slice("data: ".length))
    .filter((data): data is string => data !== undefined && data !== "[DONE]")
    .map((data) => JSON.parse(data));
}

/** An SSE response of the given OpenAI chunks, then [DONE]. */
function openAiSse(chunks: object[]): Response {
  const text = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n";
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

describe("responses of a same-format upstream reach the caller as sent", () => {
  test("openai: system_fingerprint and service_tier survive; the model is the caller's", async () => {
    const completion: any = await world.openai.chat.completions.create({ model: MODELS.openai, messages: [{ role: "user", content: "Hello" }] });
    expect(completion.system_fingerprint).toBe("fp_34a54ae93c");
    expect(completion.service_tier).toBe("default");
    expect(completion.usage.completion_tokens_details).toEqual({ reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 });
    expect(completion.model).toBe(MODELS.openai);
  });

  test("openai stream: every chunk keeps its unknown fields, and a delta field the gateway does not model (reasoning_content) arrives", async () => {
    const base = { id: "chatcmpl-r1", object: "chat.completion.chunk", created: 1, model: UPSTREAM_MODELS.openai, system_fingerprint: "fp_r1" };
    world.upstreams.openai.setBehavior({
      script: () =>
        openAiSse([
          { ...base, choices: [{ index: 0, delta: { role: "assistant", reasoning_content: "Thinking…" }, finish_reason: null }], usage: null },
          { ...base, choices: [{ index: 0, delta: { content: "Answer" }, finish_reason: null }], usage: null },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
          { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } },
        ]),
    });
    const raw = await rawStream("/v1/chat/completions", { model: MODELS.openai, messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } });
    const chunks = eventData(raw);
    expect(chunks).toHaveLength(4);
    expect(chunks[0].choices[0].delta.reasoning_content).toBe("Thinking…");
    for (const chunk of chunks) {
      expect(chunk.system_fingerprint).toBe("fp_r1");
      expect(chunk.model).toBe(MODELS.openai);
    }
    expect(chunks[3].usage).toEqual({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("openai stream without include_usage: no usage chunk and no usage key, although the upstream was asked for usage", async () => {
    const raw = await rawStream("/v1/chat/completions", { model: MODELS.openai, messages: [{ role: "user", content: "Hi" }], stream: true });
    expect(onlyRequest(world, "openai").body.stream_options).toEqual({ include_usage: true });
    const chunks = eventData(raw);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect("usage" in chunk).toBe(false);
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.system_fingerprint).toBe("fp_34a54ae93c");
    }
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("anthropic: usage.service_tier survives; the model is the caller's", async () => {
    const message: any = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "Hello" }] });
    expect(message.usage.service_tier).toBe("standard");
    expect(message.usage.cache_read_input_tokens).toBe(0);
    expect(message.model).toBe(MODELS.anthropic);
  });

  test("anthropic stream: the upstream's events in order, ping included, message_start naming the caller's model", async () => {
    const raw = await rawStream("/v1/messages", { model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "Hi" }], stream: true });
    const names = raw.split(SSE_EVENT_SEPARATOR).filter(Boolean).map((event) => event.split("\n")[0]!.slice("event: ".length));
    expect(names.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(names.at(-1)).toBe("message_stop");
    const start = eventData(raw)[0];
    expect(start.message.model).toBe(MODELS.anthropic);
    expect(start.message.usage.service_tier).toBe("standard");
  });

  test("gemini: avgLogprobs and token details survive; modelVersion is the caller's model", async () => {
    const response: any = await world.genai.models.generateContent({ model: MODELS.gemini, contents: "Hello" });
    expect(response.candidates[0].avgLogprobs).toBe(-0.0712);
    expect(response.usageMetadata.promptTokensDetails).toEqual([{ modality: "TEXT", tokenCount: 8 }]);
    expect(response.responseId).toBe("Vb1saOjzLM2Bz7IPlcbKsQc");
    expect(response.modelVersion).toBe(MODELS.gemini);
  });

  test("gemini stream: each chunk as sent (responseId, token details), modelVersion the caller's", async () => {
    const raw = await rawStream(`/v1beta/models/${MODELS.gemini}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
    const chunks = eventData(raw);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.responseId).toBe("Y71saKKBJYGVz7IP2Kq5oQ0");
      expect(chunk.usageMetadata.promptTokensDetails).toEqual([{ modality: "TEXT", tokenCount: 8 }]);
      expect(chunk.modelVersion).toBe(MODELS.gemini);
    }
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
  });

  test("a different-format upstream is translated: an openai caller served by anthropic gets no anthropic-only fields", async () => {
    const raw = await rawStream("/v1/chat/completions", { model: MODELS.anthropic, messages: [{ role: "user", content: "Hi" }], stream: true });
    const chunks = eventData(raw);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.type).toBeUndefined();
      expect(chunk.model).toBe(MODELS.anthropic);
    }
  });
});

/** POSTs to the gateway with the world's key: the response text and the usage row it wrote (prompt and completion tokens). */
async function postWithRow(path: string, body: unknown): Promise<{ text: string; billed: { input: number; output: number } }> {
  const response = await world.gw.fetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${world.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  const [row] = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
  expect(row.prompt_tokens).toBeGreaterThan(0);
  return { text, billed: { input: row.prompt_tokens, output: row.completion_tokens } };
}

/** An SSE response of the given events (Anthropic's named, Gemini's not). */
function sse(events: { event?: string; data: object }[]): Response {
  const text = events.map(({ event, data }) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

describe("an answer of a same-format upstream that reports no usage carries the usage billed (spec 2.2)", () => {
  const HI = [{ role: "user", content: "Hi" }];
  const { usage: _openAi, ...openAiPlain } = jsonFixture("openai-chat-completion.json");
  const { usage: _anthropic, ...anthropicPlain } = jsonFixture("anthropic-message.json");
  const { usageMetadata: _gemini, ...geminiPlain } = jsonFixture("gemini-generate-content.json");

  for (const [label, completion] of [["left out", openAiPlain], ["null", { ...openAiPlain, usage: null }]] as const) {
    test(`openai, usage ${label}: the completion's usage is the estimate billed`, async () => {
      world.upstreams.openai.setBehavior({ script: () => Response.json(completion) });
      const { text, billed } = await postWithRow("/v1/chat/completions", { model: MODELS.openai, messages: HI });
      const body = JSON.parse(text);
      expect(body.usage).toEqual({ prompt_tokens: billed.input, completion_tokens: billed.output, total_tokens: billed.input + billed.output });
      expect(body.system_fingerprint).toBe(completion.system_fingerprint);
    });
  }

  test("openai stream with include_usage: a usage chunk of the estimate billed comes before [DONE]", async () => {
    const base = { id: "chatcmpl-u1", object: "chat.completion.chunk", created: 7, model: UPSTREAM_MODELS.openai };
    world.upstreams.openai.setBehavior({
      script: () =>
        openAiSse([
          { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Answer" }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        ]),
    });
    const { text, billed } = await postWithRow("/v1/chat/completions", { model: MODELS.openai, messages: HI, stream: true, stream_options: { include_usage: true } });
    const chunks = eventData(text);
    expect(chunks).toHaveLength(3);
    expect(chunks[2]).toEqual({
      id: "chatcmpl-u1",
      object: "chat.completion.chunk",
      created: 7,
      model: MODELS.openai,
      choices: [],
      usage: { prompt_tokens: billed.input, completion_tokens: billed.output, total_tokens: billed.input + billed.output },
    });
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("anthropic: the message's usage is the estimate billed", async () => {
    world.upstreams.anthropic.setBehavior({ script: () => Response.json(anthropicPlain) });
    const { text, billed } = await postWithRow("/v1/messages", { model: MODELS.anthropic, max_tokens: 64, messages: HI });
    expect(JSON.parse(text).usage).toEqual({ input_tokens: billed.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: billed.output });
  });

  test("anthropic stream: a message_delta without usage gets the estimate billed", async () => {
    const message = { id: "msg_u1", type: "message", role: "assistant", model: UPSTREAM_MODELS.anthropic, content: [], stop_reason: null };
    world.upstreams.anthropic.setBehavior({
      script: () =>
        sse([
          { event: "message_start", data: { type: "message_start", message } },
          { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
          { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Answer" } } },
          { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
          { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null } } },
          { event: "message_stop", data: { type: "message_stop" } },
        ]),
    });
    const { text, billed } = await postWithRow("/v1/messages", { model: MODELS.anthropic, max_tokens: 64, messages: HI, stream: true });
    const events = eventData(text);
    expect(events.map((event) => event.type).slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(events.at(-2).usage).toEqual({ input_tokens: billed.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: billed.output });
  });

  test("gemini: the response's usageMetadata is the estimate billed", async () => {
    world.upstreams.gemini.setBehavior({ script: () => Response.json(geminiPlain) });
    const { text, billed } = await postWithRow(`/v1beta/models/${MODELS.gemini}:generateContent`, { contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
    expect(JSON.parse(text).usageMetadata).toEqual({ promptTokenCount: billed.input, candidatesTokenCount: billed.output, totalTokenCount: billed.input + billed.output });
  });

  test("gemini stream: the last chunk, without usageMetadata, gets the estimate billed", async () => {
    const chunk = (part: object, finishReason?: string) => ({ data: { candidates: [{ content: { role: "model", parts: [part] }, ...(finishReason ? { finishReason } : {}) }], modelVersion: UPSTREAM_MODELS.gemini } });
    world.upstreams.gemini.setBehavior({ script: () => sse([chunk({ text: "Ans" }), chunk({ text: "wer" }, "STOP")]) });
    const { text, billed } = await postWithRow(`/v1beta/models/${MODELS.gemini}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
    const chunks = eventData(text);
    expect(chunks).toHaveLength(2);
    expect(chunks[0].usageMetadata).toBeUndefined();
    expect(chunks[1].usageMetadata).toEqual({ promptTokenCount: billed.input, candidatesTokenCount: billed.output, totalTokenCount: billed.input + billed.output });
  });
});

describe("a prompt Gemini blocks (promptFeedback.blockReason, no candidates) is a filtered answer", () => {
  const blocked = { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 }, modelVersion: "gemini-2.0-flash" };

  test("translated for an openai caller: finish_reason content_filter, not an error", async () => {
    world.upstreams.gemini.setBehavior({ script: () => Response.json(blocked) });
    const completion = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: [{ role: "user", content: "Hi" }] });
    expect(completion.choices[0]!.finish_reason).toBe("content_filter");
    expect(completion.usage!.prompt_tokens).toBe(7);
  });

  test("streamed to a genai caller: the block arrives as sent and the stream ends cleanly", async () => {
    world.upstreams.gemini.setBehavior({
      script: () => new Response(`data: ${JSON.stringify(blocked)}\r\n\r\n`, { headers: { "content-type": "text/event-stream" } }),
    });
    const chunks: any[] = [];
    for await (const chunk of await world.genai.models.generateContentStream({ model: MODELS.gemini, contents: "Hi" })) chunks.push(chunk);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].promptFeedback.blockReason).toBe("PROHIBITED_CONTENT");
  });
});
