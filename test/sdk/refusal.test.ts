import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { anthropicFixtureEvents } from "../helpers/anthropic-upstream.ts";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * An OpenAI model that refuses answers with `refusal` text instead of `content`, and
 * finish_reason "stop". Callers of the other formats get the refusal's text as the answer and
 * their own refusal stop: Anthropic's "refusal", Gemini's SAFETY.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const REFUSAL = "I'm sorry, I can't help with that.";
const refusingCompletion = {
  id: "chatcmpl-DfR8kQ2wZ5nM1pV7sT3yH9gJ4cL6",
  object: "chat.completion",
  created: 1763715600,
  model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, message: { role: "assistant", content: null, refusal: REFUSAL }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 18, completion_tokens: 9, total_tokens: 27 },
};
const question = [{ role: "user" as const, content: "Something off-limits" }];

test("anthropic caller: the refusal's text, and stop_reason refusal", async () => {
  world.upstreams.openai.setBehavior({ completion: refusingCompletion });
  const message = await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 100, messages: question });
  expect(message.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual([REFUSAL]);
  expect(message.stop_reason).toBe("refusal");
});

test("anthropic caller, streamed: the refusal's deltas as text, and stop_reason refusal", async () => {
  world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-refusal.sse" });
  const message = await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: question }).finalMessage();
  expect(message.content.map((b) => (b.type === "text" ? b.text : b.type)).join("")).toBe(REFUSAL);
  expect(message.stop_reason).toBe("refusal");
});

test("genai caller: the refusal's text, and finishReason SAFETY", async () => {
  world.upstreams.openai.setBehavior({ completion: refusingCompletion });
  const response = await world.genai.models.generateContent({ model: MODELS.openai, contents: "Something off-limits" });
  expect(response.text).toBe(REFUSAL);
  expect(response.candidates?.[0]?.finishReason).toBe("SAFETY" as any);
});

test("genai caller, streamed: the refusal's deltas as text, and finishReason SAFETY", async () => {
  world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-refusal.sse" });
  const chunks = [];
  for await (const chunk of await world.genai.models.generateContentStream({ model: MODELS.openai, contents: "Something off-limits" })) chunks.push(chunk);
  expect(chunks.map((chunk) => chunk.text ?? "").join("")).toBe(REFUSAL);
  expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe("SAFETY" as any);
});

/**
 * An Anthropic model's streaming classifiers stop an answer with stop_reason "refusal": the
 * text so far (cut off, not an explanation) and, in newer answers, stop_details with one.
 * OpenAI callers see it the way OpenAI reports a refusal: the explanation in `refusal`,
 * finish_reason "stop", so `parse()` does not throw as it does on "content_filter".
 */
describe("an anthropic upstream's refusal, for an openai caller", () => {
  const EXPLANATION = "This request was declined because it could enable cyber harm.";
  const refusedMessage = (stopDetails: unknown) => ({
    id: "msg_01RfQ7nX2vB8kL4mZ9tY3wPd",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: [{ type: "text", text: "Hello.." }],
    stop_reason: "refusal",
    stop_sequence: null,
    stop_details: stopDetails,
    usage: { input_tokens: 24, output_tokens: 3 },
  });
  const citySchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };

  test("message.refusal holds stop_details.explanation, content is null, finish_reason stop", async () => {
    world.upstreams.anthropic.setBehavior({ message: refusedMessage({ type: "refusal", category: "cyber", explanation: EXPLANATION }) });
    const completion = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question });
    const choice = completion.choices[0]!;
    expect(choice.message.refusal).toBe(EXPLANATION);
    expect(choice.message.content).toBeNull();
    expect(choice.finish_reason).toBe("stop");
  });

  test("without stop_details (older answers), a refusal is still said, in the gateway's words", async () => {
    world.upstreams.anthropic.setBehavior({ message: refusedMessage(undefined) });
    const completion = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question });
    expect(completion.choices[0]!.message.refusal).toMatch(/refused/);
    expect(completion.choices[0]!.message.content).toBeNull();
  });

  test("chat.completions.parse() gives the refusal and parsed null instead of throwing", async () => {
    world.upstreams.anthropic.setBehavior({ message: refusedMessage({ type: "refusal", category: "cyber", explanation: EXPLANATION }) });
    const parsed = await world.openai.chat.completions.parse({
      model: MODELS.anthropic,
      messages: question,
      response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } },
    });
    expect(parsed.choices[0]!.message.refusal).toBe(EXPLANATION);
    expect(parsed.choices[0]!.message.parsed).toBeNull();
  });

  test("streamed: the explanation in delta.refusal chunks, finish_reason stop; the text streamed before it stays content", async () => {
    world.upstreams.anthropic.setBehavior({ streamFixture: "anthropic-stream-refusal.sse" });
    const stream = world.openai.chat.completions.stream({ model: MODELS.anthropic, messages: question });
    const refusals: string[] = [];
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        if (choice.delta.refusal) refusals.push(choice.delta.refusal);
        if (choice.finish_reason) finishes.push(choice.finish_reason);
      }
    }
    expect(refusals.join("")).toBe(EXPLANATION);
    expect(finishes).toEqual(["stop"]);
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.refusal).toBe(EXPLANATION);
    expect(final.choices[0]!.message.content).toBe("Hello..");
  });

  test("streamed without stop_details: one refusal chunk in the gateway's words", async () => {
    const events = anthropicFixtureEvents("anthropic-stream-refusal.sse").map(({ event, data }) => {
      if (data.type === "message_delta") delete data.delta.stop_details;
      return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    });
    world.upstreams.anthropic.setBehavior({ script: () => new Response(events.join(""), { headers: { "content-type": "text/event-stream" } }) });
    const final = await world.openai.chat.completions.stream({ model: MODELS.anthropic, messages: question }).finalChatCompletion();
    expect(final.choices[0]!.message.refusal).toMatch(/refused/);
    expect(final.choices[0]!.finish_reason).toBe("stop");
  });

  test("a genai caller gets the text and the explanation, and finishReason SAFETY", async () => {
    world.upstreams.anthropic.setBehavior({ message: refusedMessage({ type: "refusal", category: "cyber", explanation: EXPLANATION }) });
    const response = await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "Something off-limits" });
    expect(response.candidates?.[0]?.content?.parts?.map((part) => part.text)).toEqual(["Hello..", EXPLANATION]);
    expect(response.candidates?.[0]?.finishReason).toBe("SAFETY" as any);
  });
});

/**
 * A Responses API caller has a place of its own for a refusal: a `refusal` part of the
 * output message, after any text the answer had before it, streamed as response.refusal.*.
 */
describe("openai SDK, responses.create", () => {
  const refusalsOf = (response: { output: any[] }) => response.output.flatMap((item) => (item.type === "message" ? item.content : [])).filter((part: any) => part.type === "refusal");

  test("an openai upstream's refusal: a refusal part, no output_text", async () => {
    world.upstreams.openai.setBehavior({ completion: refusingCompletion });
    const response = await world.openai.responses.create({ model: MODELS.openai, input: question });
    expect(response.status).toBe("completed");
    expect(refusalsOf(response)).toEqual([{ type: "refusal", refusal: REFUSAL }]);
    expect(response.output_text).toBe("");
  });

  test("streamed: response.refusal.delta events, and the refusal part in the final Response", async () => {
    world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-refusal.sse" });
    const stream = world.openai.responses.stream({ model: MODELS.openai, input: question });
    let deltas = "";
    for await (const event of stream) if (event.type === "response.refusal.delta") deltas += event.delta;
    expect(deltas).toBe(REFUSAL);
    expect(refusalsOf(await stream.finalResponse()).map((part: any) => part.refusal)).toEqual([REFUSAL]);
  });

  test("an anthropic upstream's refusal without words: the text it cut off, then a refusal in the gateway's words", async () => {
    const events = anthropicFixtureEvents("anthropic-stream-refusal.sse").map(({ event, data }) => {
      if (data.type === "message_delta") delete data.delta.stop_details;
      return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    });
    world.upstreams.anthropic.setBehavior({ script: () => new Response(events.join(""), { headers: { "content-type": "text/event-stream" } }) });
    const final = await world.openai.responses.stream({ model: MODELS.anthropic, input: question }).finalResponse();
    const message = final.output[0] as any;
    expect(message.content.map((part: any) => part.type)).toEqual(["output_text", "refusal"]);
    expect(message.content[0].text).toBe("Hello..");
    expect(message.content[1].refusal).toMatch(/refused/);
  });
});
