import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { call, CALLERS, expectedOf, KINDS, MODELS, onlyRequest, startWorld, UPSTREAM_MODELS, type CallerName, type KindName, type Outcome, type World } from "./_support.ts";

/**
 * Issue 3 item 1 and 5: every caller SDK (openai, @anthropic-ai/sdk, @google/genai) against
 * every upstream kind (openai, anthropic, gemini, mock), plain and streamed. The text is the
 * upstream's and the usage is the upstream's own numbers mapped into the caller's format
 * (promptTokenCount <-> prompt_tokens <-> input_tokens, candidatesTokenCount <->
 * completion_tokens <-> output_tokens).
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The caller's own finish vocabulary for a plain text answer. */
const TEXT_FINISH: Record<CallerName, string> = { openai: "stop", anthropic: "end_turn", genai: "STOP" };

function expectUsage(caller: CallerName, outcome: Outcome, input: number, output: number) {
  expect(outcome.usage).not.toBeNull();
  expect({ input: outcome.usage!.input, output: outcome.usage!.output }).toEqual({ input, output });
  // OpenAI and Gemini also report a total.
  if (caller !== "anthropic") expect(outcome.usage!.total).toBe(input + output);
}

describe.each(CALLERS.map((c) => [c]))("caller SDK %s", (caller: CallerName) => {
  describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
    const prompt = `Hi from the ${caller} SDK to the ${kind} upstream`;

    test("plain: the upstream's text and usage", async () => {
      const outcome = await call[caller].plain(world, { model: MODELS[kind], prompt });
      expect(outcome.finish).toBe(TEXT_FINISH[caller]);
      expect(outcome.toolCalls).toEqual([]);
      // The envelope each SDK's users read, naming the model they asked for.
      if (caller === "openai") expect(outcome.raw).toMatchObject({ object: "chat.completion", model: MODELS[kind] });
      if (caller === "anthropic") {
        expect(outcome.raw).toMatchObject({ type: "message", role: "assistant", model: MODELS[kind] });
        expect(outcome.raw.id).toMatch(/^msg_/);
      }
      if (caller === "genai") expect(outcome.raw.candidates[0].content.role).toBe("model");
      if (kind === "mock") {
        expect(outcome.text).toContain(prompt);
        expect(outcome.usage!.input).toBeGreaterThan(0);
        expect(outcome.usage!.output).toBeGreaterThan(0);
        if (caller !== "anthropic") expect(outcome.usage!.total).toBe(outcome.usage!.input + outcome.usage!.output);
        return;
      }
      const expected = expectedOf(kind, "plain");
      expect(outcome.text).toBe(expected.text);
      expectUsage(caller, outcome, expected.inputTokens, expected.outputTokens);
      const received = onlyRequest(world, kind);
      expect(received.body.stream ?? false).toBe(false);
      // The channel's model_map applies upstream (Gemini has it in the path).
      if (kind === "gemini") expect(received.model).toBe(UPSTREAM_MODELS.gemini);
      else expect(received.body.model).toBe(UPSTREAM_MODELS[kind]);
    });

    test("streamed: the same text reassembled, usage at the end", async () => {
      const outcome = await call[caller].stream(world, { model: MODELS[kind], prompt });
      expect(outcome.finish).toBe(TEXT_FINISH[caller]);
      expect(outcome.toolCalls).toEqual([]);
      // Streamed for real: more than one text-bearing chunk or event.
      expect(outcome.chunks!.length).toBeGreaterThan(2);
      if (kind === "mock") {
        expect(outcome.text).toContain(prompt);
        // The mock counts the same for the same prompt whether streamed or not.
        const plain = await call[caller].plain(world, { model: MODELS[kind], prompt });
        expect(outcome.text).toBe(plain.text);
        expect(outcome.usage).toEqual(plain.usage);
        expect(outcome.usage!.output).toBeGreaterThan(0);
        return;
      }
      const expected = expectedOf(kind, "stream");
      expect(outcome.text).toBe(expected.text);
      expectUsage(caller, outcome, expected.inputTokens, expected.outputTokens);
      const received = onlyRequest(world, kind);
      if (kind === "gemini") {
        expect(received.action).toBe("streamGenerateContent");
        expect(received.query.alt).toBe("sse");
      } else {
        expect(received.body.stream).toBe(true);
      }
    });
  });
});

describe("stream wire details each SDK relies on", () => {
  test.each(KINDS.map((k) => [k]))("openai caller, %s upstream: chunk objects, one finish_reason, usage chunk last with empty choices", async (kind) => {
    const outcome = await call.openai.stream(world, { model: MODELS[kind as KindName], prompt: "wire check" });
    const chunks = outcome.chunks!;
    for (const chunk of chunks) {
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.model).toBe(MODELS[kind as KindName]);
      expect(typeof chunk.id).toBe("string");
    }
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.flatMap((c) => c.choices.filter((ch: any) => ch.finish_reason !== null))).toHaveLength(1);
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.slice(0, -1).every((c) => c.usage == null)).toBe(true);
  });

  test.each(KINDS.map((k) => [k]))("anthropic caller, %s upstream: create({stream:true}) yields the full event sequence", async (kind) => {
    const stream = await world.anthropic.messages.create({
      model: MODELS[kind as KindName],
      max_tokens: 256,
      messages: [{ role: "user", content: "wire check" }],
      stream: true,
    });
    const types: string[] = [];
    let outputTokens: number | null = null;
    let startInputTokens: number | null = null;
    let startId = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "message_start") {
        startId = event.message.id;
        startInputTokens = event.message.usage.input_tokens;
        expect(event.message.role).toBe("assistant");
        expect(event.message.model).toBe(MODELS[kind as KindName]);
        expect(event.message.content).toEqual([]);
      }
      if (event.type === "message_delta") outputTokens = event.usage.output_tokens;
    }
    expect(startId).toMatch(/^msg_/);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(types.at(-2)).toBe("message_delta");
    expect(types).toContain("content_block_start");
    expect(types).toContain("content_block_delta");
    expect(types.filter((t) => t === "content_block_start").length).toBe(types.filter((t) => t === "content_block_stop").length);
    if (kind === "mock") expect(outputTokens).toBeGreaterThan(0);
    else expect(outputTokens).toBe(expectedOf(kind as Exclude<KindName, "mock">, "stream").outputTokens);
    expect(typeof startInputTokens).toBe("number");
  });

  test("anthropic caller, anthropic upstream: message_start carries the upstream's input_tokens", async () => {
    // Anthropic reports the prompt's tokens in message_start; a client reading them there (not
    // only from the final message) must see the upstream's number, as it would going direct.
    const stream = world.anthropic.messages.stream({ model: MODELS.anthropic, max_tokens: 256, messages: [{ role: "user", content: "wire check" }] });
    let fromStart: number | null = null;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") fromStart = event.message.usage.input_tokens;
    });
    const final = await stream.finalMessage();
    expect(final.usage.input_tokens).toBe(expectedOf("anthropic", "stream").inputTokens);
    expect(fromStart as number | null).toBe(expectedOf("anthropic", "stream").inputTokens);
  });

  test.each(KINDS.map((k) => [k]))("genai caller, %s upstream: finishReason only on the last chunk, which carries the whole usage", async (kind) => {
    const outcome = await call.genai.stream(world, { model: MODELS[kind as KindName], prompt: "wire check" });
    const chunks = outcome.chunks!;
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(chunks.slice(0, -1).every((c: any) => c.candidates?.[0]?.finishReason === undefined)).toBe(true);
    expect(chunks.at(-1).usageMetadata.totalTokenCount).toBe(outcome.usage!.input + outcome.usage!.output);
    for (const chunk of chunks) expect(chunk.candidates[0].content.role).toBe("model");
  });
});
