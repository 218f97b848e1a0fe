import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * An Anthropic caller is told when a stop sequence ended the answer: stop_reason
 * "stop_sequence" and `stop_sequence` set to the one that matched. The demo model knows (it
 * cuts its echo there); an openai or gemini upstream says only that it stopped, not on
 * which sequence, so those answers end as "end_turn".
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The demo model echoes the prompt after this. */
const ECHO = "This is a mock reply from the gateway. You said: ";
const ask = (model: string, stop_sequences: string[]) => ({
  model,
  max_tokens: 100,
  messages: [{ role: "user" as const, content: "Tell me about cats" }],
  stop_sequences,
});

describe("the demo model", () => {
  test("stopped on a sequence: stop_reason stop_sequence, the sequence named, the text cut before it", async () => {
    const message = await world.anthropic.messages.create(ask(MODELS.mock, ["about"]));
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("about");
    expect(message.content.map((block) => (block.type === "text" ? block.text : ""))).toEqual([`${ECHO}Tell me `]);
  });

  test("streamed, the same, from message_delta", async () => {
    const message = await world.anthropic.messages.stream(ask(MODELS.mock, ["about"])).finalMessage();
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("about");
  });

  test("of several sequences, the one the answer reaches first, not the first listed", async () => {
    const message = await world.anthropic.messages.create(ask(MODELS.mock, ["cats", "mock"]));
    expect(message.stop_sequence).toBe("mock");
    expect(message.content.map((block) => (block.type === "text" ? block.text : ""))).toEqual(["This is a "]);
  });

  test("a sequence the answer never reaches: end_turn, stop_sequence null", async () => {
    const message = await world.anthropic.messages.create(ask(MODELS.mock, ["dogs"]));
    expect(message.stop_reason).toBe("end_turn");
    expect(message.stop_sequence).toBeNull();
  });

  test("an openai caller sees finish_reason stop, as OpenAI reports a stop sequence", async () => {
    const completion = await world.openai.chat.completions.create({ model: MODELS.mock, messages: [{ role: "user", content: "Tell me about cats" }], stop: ["about"] });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.choices[0]!.message.content).toBe(`${ECHO}Tell me `);
  });
});

describe("upstreams that do not say which sequence matched", () => {
  for (const kind of ["openai", "gemini"] as const) {
    test(`${kind}: the sequences are sent, and the answer ends as end_turn, plain and streamed`, async () => {
      const message = await world.anthropic.messages.create(ask(MODELS[kind], ["about"]));
      expect(message.stop_reason).toBe("end_turn");
      expect(message.stop_sequence).toBeNull();
      const streamed = await world.anthropic.messages.stream(ask(MODELS[kind], ["about"])).finalMessage();
      expect(streamed.stop_reason).toBe("end_turn");
      const sent = world.upstreams[kind].requests.map((request) => request.body);
      expect(sent.map((body) => body.stop ?? body.generationConfig?.stopSequences)).toEqual([["about"], ["about"]]);
    });
  }
});

test("gemini takes at most 5 stop sequences: the first 5 are sent, and the warnings header says the rest were not", async () => {
  const sequences = ["one", "two", "three", "four", "five", "six", "seven"];
  const { response } = await world.anthropic.messages.create(ask(MODELS.gemini, sequences)).withResponse();
  expect(world.upstreams.gemini.requests.map((request) => request.body.generationConfig.stopSequences)).toEqual([sequences.slice(0, 5)]);
  expect(response.headers.get("x-gateway-warnings")).toContain("only the first 5 were sent");
});

test("openai takes at most 4 stop sequences: an anthropic caller's first 4 are sent, and the warnings header says the rest were not", async () => {
  const sequences = ["one", "two", "three", "four", "five", "six"];
  const { response } = await world.anthropic.messages.create(ask(MODELS.openai, sequences)).withResponse();
  expect(world.upstreams.openai.requests.map((request) => request.body.stop)).toEqual([sequences.slice(0, 4)]);
  expect(response.headers.get("x-gateway-warnings")).toContain("only the first 4 were sent");
});

describe("anthropic refuses a stop sequence of whitespace alone, which OpenAI and Gemini take", () => {
  const askOpenAi = (stop: string[]) =>
    world.openai.chat.completions.create({ model: MODELS.anthropic, messages: [{ role: "user", content: "List three cats" }], stop }).withResponse();

  test("an openai caller's \"\\n\" is not sent, the others are, and the warnings name it", async () => {
    const { response } = await askOpenAi(["\n", "END"]);
    expect(world.upstreams.anthropic.requests.map((request) => request.body.stop_sequences)).toEqual([["END"]]);
    expect(response.headers.get("x-gateway-warnings")).toContain('stop: "\\n" not sent');
  });

  test("with none left, no stop_sequences at all", async () => {
    const { response } = await askOpenAi([" ", "\n\n"]);
    expect(world.upstreams.anthropic.requests.map((request) => "stop_sequences" in request.body)).toEqual([false]);
    expect(response.headers.get("x-gateway-warnings")).toContain('" ", "\\n\\n" not sent');
  });

  test("a gemini caller's too", async () => {
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "List three cats", config: { stopSequences: ["\t", "END"] } });
    expect(world.upstreams.anthropic.requests.map((request) => request.body.stop_sequences)).toEqual([["END"]]);
  });
});
