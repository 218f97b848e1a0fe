import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { bearer } from "../helpers/gateway.ts";
import { MODELS, onlyRequest, rejectionOf, startWorld, warningsOf, type World } from "./_support.ts";

/**
 * A model's thinking across formats. What the caller asks (OpenAI's reasoning_effort,
 * Anthropic's thinking and effort, Gemini's thinkingConfig, the Responses API's
 * reasoning.effort) reaches an upstream of another kind in that upstream's terms; what the
 * upstream thought (Anthropic's thinking blocks, Gemini's thought summaries, the
 * reasoning_content of OpenAI-compatible servers) reaches the caller where its format shows
 * thinking, when it asked to see it.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const question = [{ role: "user" as const, content: "What is the cube root of 27?" }];
const THOUGHT = "27 is 3 cubed, so its cube root is 3.";
const GEMINI_THOUGHT = "**Finding the cube root**\n\n27 is 3 cubed, so its cube root is 3.";
const ANSWER = "The cube root of 27 is 3.";

/** POSTs a chat-completions body and returns the response, its body read. */
async function chat(body: Record<string, unknown>): Promise<{ response: Response; json: any }> {
  const response = await world.gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(world.key), body: JSON.stringify(body) });
  return { response, json: await response.json() };
}

/** POSTs a generateContent body for `model` and returns the response, its body read. */
async function generate(model: string, body: Record<string, unknown>): Promise<{ response: Response; json: any }> {
  const response = await world.gw.fetch(`/v1beta/models/${model}:generateContent`, { method: "POST", headers: bearer(world.key), body: JSON.stringify(body) });
  return { response, json: await response.json() };
}

const geminiAsking = (generationConfig: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  contents: [{ role: "user", parts: [{ text: "What is the cube root of 27?" }] }],
  generationConfig,
  ...extra,
});

describe("what the caller asks reaches the upstream in its own terms", () => {
  test("openai reasoning_effort: Anthropic's adaptive thinking at that effort, Gemini's level with thought summaries", async () => {
    const anthropic = await chat({ model: MODELS.anthropic, messages: question, reasoning_effort: "high" });
    expect(anthropic.response.status).toBe(200);
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.thinking).toEqual({ type: "adaptive" });
    expect(sent.output_config).toEqual({ effort: "high" });

    const gemini = await chat({ model: MODELS.gemini, messages: question, reasoning_effort: "minimal" });
    expect(gemini.response.status).toBe(200);
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig).toEqual({ thinkingLevel: "MINIMAL", includeThoughts: true });
    expect(warningsOf(anthropic.response) + warningsOf(gemini.response)).not.toContain("reasoning");
  });

  test("openai xhigh is Anthropic's xhigh and Gemini's HIGH, Anthropic's max OpenAI's xhigh; none turns thinking off", async () => {
    await chat({ model: MODELS.anthropic, messages: question, reasoning_effort: "xhigh" });
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual({ effort: "xhigh" });
    await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 100, messages: question, thinking: { type: "adaptive" }, output_config: { effort: "max" } });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("xhigh");
    await chat({ model: MODELS.gemini, messages: question, reasoning_effort: "xhigh" });
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig.thinkingLevel).toBe("HIGH");
    world.reset();

    await chat({ model: MODELS.anthropic, messages: question, reasoning_effort: "none" });
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "disabled" });
    await chat({ model: MODELS.gemini, messages: question, reasoning_effort: "none" });
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
  });

  test("anthropic thinking budget: Gemini's thinkingBudget with thought summaries, OpenAI's effort for its size", async () => {
    const thinking = { type: "enabled" as const, budget_tokens: 4000 };
    const { response } = await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 8000, messages: question, thinking }).withResponse();
    expect(warningsOf(response)).not.toContain("thinking");
    expect(onlyRequest(world, "gemini").body.generationConfig).toMatchObject({ maxOutputTokens: 8000, thinkingConfig: { thinkingBudget: 4000, includeThoughts: true } });

    await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 8000, messages: question, thinking });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("medium");
    world.reset();
    await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 40_000, messages: question, thinking: { type: "enabled", budget_tokens: 32_000 } });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("high");
  });

  test("anthropic thinking off, and adaptive at an effort, reach the other kinds", async () => {
    await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 100, messages: question, thinking: { type: "disabled" } });
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 100, messages: question, thinking: { type: "adaptive" }, output_config: { effort: "low" } });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("low");
    world.reset();
    await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 100, messages: question, thinking: { type: "adaptive" } });
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true });
  });

  test("gemini thinkingBudget: Anthropic's budget under max_tokens, lowered to fit it, or left out when it cannot", async () => {
    const fits = await generate(MODELS.anthropic, geminiAsking({ maxOutputTokens: 6000, thinkingConfig: { thinkingBudget: 3000, includeThoughts: true } }));
    expect(fits.response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body).toMatchObject({ max_tokens: 6000, thinking: { type: "enabled", budget_tokens: 3000 } });
    expect(warningsOf(fits.response)).not.toContain("reasoning");
    world.reset();

    const lowered = await generate(MODELS.anthropic, geminiAsking({ maxOutputTokens: 2000, thinkingConfig: { thinkingBudget: 3000 } }));
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "enabled", budget_tokens: 1999 });
    expect(warningsOf(lowered.response)).toContain("reasoning: thinking budget lowered from 3000 to 1999 tokens");
    world.reset();

    const tooSmall = await generate(MODELS.anthropic, geminiAsking({ maxOutputTokens: 800, thinkingConfig: { thinkingBudget: 3000 } }));
    expect(tooSmall.response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("thinking");
    expect(warningsOf(tooSmall.response)).toContain("reasoning: not passed on: the upstream's thinking budget is at least 1024 tokens");
  });

  test("a thinking Anthropic model takes no temperature, top_k or low top_p, and does not think before a forced tool call", async () => {
    const sampled = await generate(MODELS.anthropic, geminiAsking({ temperature: 0.3, topK: 40, topP: 0.5, thinkingConfig: { thinkingLevel: "low" } }));
    expect(sampled.response.status).toBe(200);
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.thinking).toEqual({ type: "adaptive" });
    expect(sent.output_config).toEqual({ effort: "low" });
    for (const field of ["temperature", "top_k", "top_p"]) {
      expect(sent).not.toHaveProperty(field);
      expect(warningsOf(sampled.response)).toContain(`${field}: not passed on`);
    }
    world.reset();

    const forced = await generate(
      MODELS.anthropic,
      geminiAsking(
        { thinkingConfig: { thinkingBudget: 2048 } },
        { tools: [{ functionDeclarations: [{ name: "cube_root", parameters: { type: "OBJECT", properties: { n: { type: "NUMBER" } } } }] }], toolConfig: { functionCallingConfig: { mode: "ANY" } } },
      ),
    );
    expect(forced.response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("thinking");
    expect(warningsOf(forced.response)).toContain("reasoning: not passed on: the upstream does not think before a tool call the request forces");
  });

  test("a thinking Anthropic model is not asked to think while answering tool calls whose signed thinking the caller's format lost", async () => {
    // Anthropic refuses such a turn (400 "Expected `thinking` or `redacted_thinking`"); without thinking it takes it.
    const tools = [{ type: "function", function: { name: "cube_root", parameters: { type: "object", properties: { n: { type: "number" } } } } }];
    const opening = await chat({ model: MODELS.anthropic, messages: question, tools, reasoning_effort: "low" });
    expect(opening.response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "adaptive" });
    world.reset();

    const calling = { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "cube_root", arguments: '{"n":27}' } }] };
    const answering = await chat({ model: MODELS.anthropic, messages: [...question, calling, { role: "tool", tool_call_id: "toolu_1", content: "3" }], tools, reasoning_effort: "low" });
    expect(answering.response.status).toBe(200);
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent).not.toHaveProperty("thinking");
    expect(sent.output_config).toBeUndefined();
    expect(sent.messages.at(-1).content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" });
    expect(warningsOf(answering.response)).toContain("reasoning: not passed on for this turn: the upstream, thinking, needs back its signed thinking");
    world.reset();

    // The next question after the cycle ended thinks again.
    const done = { role: "assistant", content: "The cube root of 27 is 3." };
    const next = await chat({ model: MODELS.anthropic, messages: [...question, calling, { role: "tool", tool_call_id: "toolu_1", content: "3" }, done, { role: "user", content: "And of 64?" }], tools, reasoning_effort: "low" });
    expect(next.response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "adaptive" });
  });

  test("gemini thinkingLevel is OpenAI's reasoning_effort; thought summaries asked for alone leave the effort to the model", async () => {
    await generate(MODELS.openai, geminiAsking({ thinkingConfig: { thinkingLevel: "MEDIUM" } }));
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("medium");
    world.reset();
    await generate(MODELS.openai, geminiAsking({ thinkingConfig: { includeThoughts: true } }));
    expect(onlyRequest(world, "openai").body).not.toHaveProperty("reasoning_effort");
    await generate(MODELS.anthropic, geminiAsking({ thinkingConfig: { includeThoughts: true } }));
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "adaptive" });
  });

  test("the Responses API's reasoning.effort reaches the upstream; the variant's default temperature is left out, said so", async () => {
    const response = await world.gw.fetch("/v1/responses", {
      method: "POST",
      headers: bearer(world.key),
      body: JSON.stringify({ model: MODELS.anthropic, input: "What is the cube root of 27?", store: false, reasoning: { effort: "medium", summary: "auto" } }),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.output_config).toEqual({ effort: "medium" });
    expect(sent).not.toHaveProperty("temperature");
    // Variant A's 0.7 (spec 4.1), which a thinking Claude refuses.
    expect(warningsOf(response)).toBe("temperature: not passed on: the upstream takes only 1 while the model thinks");
  });

  test("a same-format upstream gets the caller's own fields as sent", async () => {
    await chat({ model: MODELS.openai, messages: question, reasoning_effort: "xhigh" });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("xhigh");
    await generate(MODELS.gemini, geminiAsking({ thinkingConfig: { thinkingBudget: -1, includeThoughts: true } }));
    expect(onlyRequest(world, "gemini").body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: -1, includeThoughts: true });
  });
});

describe("what is not a thinking setting is a 400 naming the field, before any upstream call", () => {
  afterEach(() => {
    for (const kind of ["openai", "anthropic", "gemini"] as const) expect(world.upstreams[kind].requests).toHaveLength(0);
  });

  test("openai reasoning_effort that is not a string", async () => {
    const { response, json } = await chat({ model: MODELS.anthropic, messages: question, reasoning_effort: 3 });
    expect(response.status).toBe(400);
    expect(json.error.message).toContain("reasoning_effort");
  });

  test("anthropic thinking under 1,024 tokens, or without a type", async () => {
    const small = await rejectionOf(world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 4000, messages: question, thinking: { type: "enabled", budget_tokens: 500 } }));
    expect(small.status).toBe(400);
    expect(small.message).toContain("thinking.budget_tokens");
    const untyped = await rejectionOf(world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 4000, messages: question, thinking: { budget_tokens: 2000 } as never }));
    expect(untyped.status).toBe(400);
    expect(untyped.message).toContain("thinking");
  });

  test("gemini thinkingBudget under -1 or fractional", async () => {
    for (const thinkingConfig of [{ thinkingBudget: -2 }, { thinkingBudget: 1.5 }, { thinkingBudget: "lots" }]) {
      const { response, json } = await generate(MODELS.openai, geminiAsking({ thinkingConfig }));
      expect(response.status).toBe(400);
      expect(json.error.message).toContain("generationConfig.thinkingConfig.thinkingBudget");
    }
  });
});

describe("a setting the gateway does not know (one a provider adds later) reaches the caller's own format as sent", () => {
  test("and is named for another, which gets no thinking setting from it", async () => {
    await chat({ model: MODELS.openai, messages: question, reasoning_effort: "ultra" });
    expect(onlyRequest(world, "openai").body.reasoning_effort).toBe("ultra");
    const translated = await chat({ model: MODELS.anthropic, messages: question, reasoning_effort: "ultra" });
    expect(translated.response.status).toBe(200);
    expect(warningsOf(translated.response)).toContain("reasoning_effort: not passed on");
    expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("thinking");
    world.reset();

    await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 100, messages: question, thinking: { type: "deliberate" } as never });
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "deliberate" });
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.gemini, max_tokens: 100, messages: question, thinking: { type: "deliberate" } as never, output_config: { effort: "huge" } as never })
      .withResponse();
    expect(warningsOf(response)).toContain("thinking: not passed on");
    expect(warningsOf(response)).toContain("output_config.effort: not passed on");
    expect(onlyRequest(world, "gemini").body.generationConfig).not.toHaveProperty("thinkingConfig");
    world.reset();

    const level = await generate(MODELS.openai, geminiAsking({ thinkingConfig: { thinkingLevel: "ULTRA" } }));
    expect(warningsOf(level.response)).toContain("generationConfig.thinkingConfig.thinkingLevel: not passed on");
    expect(onlyRequest(world, "openai").body).not.toHaveProperty("reasoning_effort");
  });
});

describe("what the upstream thought reaches the caller where its format shows thinking", () => {
  test("openai caller: Anthropic's thinking in message.reasoning_content, redacted thinking left out", async () => {
    world.upstreams.anthropic.setBehavior({ message: jsonFixture("anthropic-thinking-message.json") });
    const completion = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question, reasoning_effort: "medium" });
    const message = completion.choices[0]!.message as typeof completion.choices[0]["message"] & { reasoning_content?: string };
    expect(message.content).toBe(ANSWER);
    expect(message.reasoning_content).toBe(THOUGHT);
    expect(completion.usage?.completion_tokens).toBe(61);
  });

  test("openai caller, streamed: Gemini's thoughts as delta.reasoning_content before the content", async () => {
    world.upstreams.gemini.setBehavior({ streamFixture: "gemini-thinking-stream.sse" });
    const stream = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: question, reasoning_effort: "low", stream: true });
    let reasoning = "";
    let content = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) {
        expect(content).toBe("");
        reasoning += delta.reasoning_content;
      }
      content += delta?.content ?? "";
    }
    expect(reasoning).toBe(GEMINI_THOUGHT);
    expect(content).toBe(ANSWER);
  });

  test("anthropic caller with thinking on: thinking blocks, whole and streamed", async () => {
    world.upstreams.openai.setBehavior({ completion: jsonFixture("openai-chat-reasoning.json"), streamFixture: "openai-chat-reasoning-stream.sse" });
    const thinking = { type: "enabled" as const, budget_tokens: 2048 };
    const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 4000, messages: question, thinking });
    expect(message.content).toEqual([
      { type: "thinking", thinking: THOUGHT, signature: "" },
      { type: "text", text: ANSWER } as never,
    ]);

    const streamed = await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 4000, messages: question, thinking }).finalMessage();
    expect(streamed.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(streamed.content[0]).toMatchObject({ type: "thinking", thinking: THOUGHT });
    expect(streamed.content[1]).toMatchObject({ type: "text", text: ANSWER });
    expect(streamed.usage.output_tokens).toBe(58);
  });

  test("anthropic caller without thinking: no thinking blocks, though the upstream thought", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture("gemini-thinking.json"), streamFixture: "gemini-thinking-stream.sse" });
    const message = await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 4000, messages: question });
    expect(message.content.map((block) => block.type)).toEqual(["text"]);
    // The thinking is paid for all the same: Gemini counts it apart, and it is output.
    expect(message.usage.output_tokens).toBe(66);
    const streamed = await world.anthropic.messages.stream({ model: MODELS.gemini, max_tokens: 4000, messages: question }).finalMessage();
    expect(streamed.content).toEqual([{ type: "text", text: ANSWER } as never]);
  });

  test("genai caller with includeThoughts: thought parts, whole and streamed; response.text is the answer alone", async () => {
    world.upstreams.anthropic.setBehavior({ message: jsonFixture("anthropic-thinking-message.json"), streamFixture: "anthropic-thinking-stream.sse" });
    const config = { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } };
    const response = await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "What is the cube root of 27?", config });
    expect(response.candidates?.[0]?.content?.parts).toEqual([{ text: THOUGHT, thought: true }, { text: ANSWER }]);
    expect(response.text).toBe(ANSWER);

    const parts: { text?: string; thought?: boolean }[] = [];
    for await (const chunk of await world.genai.models.generateContentStream({ model: MODELS.anthropic, contents: "What is the cube root of 27?", config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    }
    const thoughts = parts.filter((part) => part.thought).map((part) => part.text).join("");
    const answer = parts.filter((part) => !part.thought).map((part) => part.text ?? "").join("");
    expect(thoughts).toBe(THOUGHT);
    expect(answer).toBe(ANSWER);
  });

  test("genai caller without includeThoughts: no thought parts", async () => {
    world.upstreams.openai.setBehavior({ completion: jsonFixture("openai-chat-reasoning.json") });
    const response = await world.genai.models.generateContent({ model: MODELS.openai, contents: "What is the cube root of 27?" });
    expect(response.candidates?.[0]?.content?.parts).toEqual([{ text: ANSWER }]);
  });

  test("a stream that reports no usage is billed for its thinking too", async () => {
    world.upstreams.openai.setBehavior({
      script: () =>
        new Response(
          [
            `data: {"id":"r1","object":"chat.completion.chunk","created":1763715600,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"${"x".repeat(400)}"},"finish_reason":null}]}\n\n`,
            `data: {"id":"r1","object":"chat.completion.chunk","created":1763715600,"model":"m","choices":[{"index":0,"delta":{"content":"${"y".repeat(40)}"},"finish_reason":"stop"}]}\n\n`,
            "data: [DONE]\n\n",
          ].join(""),
          { headers: { "content-type": "text/event-stream" } },
        ),
    });
    const message = await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 4000, messages: question }).finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "y".repeat(40) } as never]);
    const [row] = (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.usage;
    expect(row.status).toBe(200);
    // 440 characters streamed, at about 4 a token: the thinking the caller did not see counts.
    expect(row.completion_tokens).toBe(110);
  });

  test("responses caller asking for a summary: a reasoning item before the message, whole and streamed", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture("gemini-thinking.json"), streamFixture: "gemini-thinking-stream.sse" });
    const asked = { model: MODELS.gemini, input: "What is the cube root of 27?", store: false, reasoning: { effort: "low" as const, summary: "auto" as const } };
    const whole = await world.openai.responses.create(asked);
    expect(whole.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(whole.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: GEMINI_THOUGHT }] });
    expect(whole.output_text).toBe(ANSWER);

    const stream = world.openai.responses.stream(asked);
    const events: string[] = [];
    let summary = "";
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === "response.reasoning_summary_text.delta") summary += event.delta;
    }
    const final = await stream.finalResponse();
    expect(summary).toBe(GEMINI_THOUGHT);
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(final.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: GEMINI_THOUGHT }] });
    expect(final.output_text).toBe(ANSWER);
    const order = ["response.reasoning_summary_part.added", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_text.delta"];
    const positions = order.map((type) => events.indexOf(type));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  test("responses caller: no reasoning item without a summary asked for; one sent back is left out, said so", async () => {
    world.upstreams.anthropic.setBehavior({ message: jsonFixture("anthropic-thinking-message.json") });
    const first = await world.openai.responses.create({ model: MODELS.anthropic, input: "What is the cube root of 27?", store: false, reasoning: { effort: "low" } });
    expect(first.output.map((item) => item.type)).toEqual(["message"]);

    const answered = await world.openai.responses.create({ model: MODELS.anthropic, input: "What is the cube root of 27?", store: false, reasoning: { summary: "auto" } });
    expect(answered.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    world.reset();
    const { response } = await world.openai.responses
      .create({ model: MODELS.openai, input: [{ role: "user", content: "What is the cube root of 27?" }, ...answered.output, { role: "user", content: "And of 64?" }] as never, store: false })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toContain("input[1] (reasoning): left out");
    expect(onlyRequest(world, "openai").body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
  });
});

describe("usage counts the thinking apart where the caller's format does", () => {
  // gemini-thinking: 10 answer tokens and 56 of thoughts; openai-chat-reasoning: 58 completion tokens, 49 of them reasoning.
  test("openai caller: Gemini's thoughtsTokenCount is completion_tokens_details.reasoning_tokens, inside completion_tokens, whole and streamed", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture("gemini-thinking.json"), streamFixture: "gemini-thinking-stream.sse" });
    const completion = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: question });
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 66, total_tokens: 75, completion_tokens_details: { reasoning_tokens: 56 } });

    const stream = await world.openai.chat.completions.create({ model: MODELS.gemini, messages: question, stream: true, stream_options: { include_usage: true } });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ completion_tokens: 66, completion_tokens_details: { reasoning_tokens: 56 } });
    const rows = (await world.gw.admin("GET", "/v1/admin/usage?limit=2")).body.usage;
    expect(rows.map((row: { completion_tokens: number }) => row.completion_tokens)).toEqual([66, 66]);
  });

  test("genai caller: OpenAI's reasoning_tokens are thoughtsTokenCount, left out of candidatesTokenCount, whole and streamed", async () => {
    world.upstreams.openai.setBehavior({ completion: jsonFixture("openai-chat-reasoning.json"), streamFixture: "openai-chat-reasoning-stream.sse" });
    const expected = { promptTokenCount: 12, candidatesTokenCount: 9, thoughtsTokenCount: 49, totalTokenCount: 70 };
    const response = await world.genai.models.generateContent({ model: MODELS.openai, contents: "What is the cube root of 27?" });
    expect(response.usageMetadata).toMatchObject(expected);

    let usage: unknown;
    for await (const chunk of await world.genai.models.generateContentStream({ model: MODELS.openai, contents: "What is the cube root of 27?" })) {
      if (chunk.usageMetadata) usage = chunk.usageMetadata;
    }
    expect(usage).toMatchObject(expected);

    // A reasoning count that is not believable is left out; the usage it came with is still billed.
    const odd = jsonFixture("openai-chat-reasoning.json");
    odd.usage.completion_tokens_details = { reasoning_tokens: 1.5 };
    world.upstreams.openai.setBehavior({ completion: odd });
    const oddResponse = await world.genai.models.generateContent({ model: MODELS.openai, contents: "What is the cube root of 27?" });
    expect(oddResponse.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 58, totalTokenCount: 70 });
    expect(oddResponse.usageMetadata?.thoughtsTokenCount).toBeUndefined();
    const [row] = (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.usage;
    expect(row).toMatchObject({ prompt_tokens: 12, completion_tokens: 58 });
  });

  test("responses caller: output_tokens_details.reasoning_tokens, whole and streamed; 0 when the upstream does not count them apart", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture("gemini-thinking.json"), streamFixture: "gemini-thinking-stream.sse" });
    const asked = { model: MODELS.gemini, input: "What is the cube root of 27?", store: false };
    const whole = await world.openai.responses.create(asked);
    expect(whole.usage).toMatchObject({ input_tokens: 9, output_tokens: 66, output_tokens_details: { reasoning_tokens: 56 } });
    const final = await world.openai.responses.stream(asked).finalResponse();
    expect(final.usage).toMatchObject({ output_tokens: 66, output_tokens_details: { reasoning_tokens: 56 } });

    world.upstreams.anthropic.setBehavior({ message: jsonFixture("anthropic-thinking-message.json") });
    const anthropic = await world.openai.responses.create({ ...asked, model: MODELS.anthropic });
    expect(anthropic.usage).toMatchObject({ output_tokens: 61, output_tokens_details: { reasoning_tokens: 0 } });
  });

  test("anthropic caller: the thinking is inside output_tokens, as Anthropic counts it", async () => {
    world.upstreams.gemini.setBehavior({ response: jsonFixture("gemini-thinking.json") });
    const message = await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 4000, messages: question });
    expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: 66 });
  });
});
