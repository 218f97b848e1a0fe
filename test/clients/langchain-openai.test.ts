import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { answerWithCall, answerWithText, expectedOf, expectResultUpstream, KINDS, MODELS, startWorld, WEATHER, type KindName, type RemoteKind, type World } from "../sdk/_support.ts";
import { ADA, chatOpenAi, expectAnswerSchemaUpstream, expectLangChainRefusals, expectedWeatherArgs, expectForcedToolUpstream, lastUpstreamBody, ONE_CALL_STREAM, Person, streamedWhole, weatherToolRoundTrip } from "./_legacy-support.ts";

/**
 * LangChain's ChatOpenAI (@langchain/openai, configuration.baseURL the gateway's /v1) against
 * every upstream kind: invoke, stream with streamUsage, bindTools with a ToolMessage sent back,
 * withStructuredOutput by json_schema (its default) and by a forced function call, and the same
 * model with useResponsesApi, which calls /v1/responses.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The upstream's text and usage for `mode` (the mock echoes the prompt and counts its own), as LangChain reports them. */
function expectAnswer(kind: KindName, mode: "plain" | "stream", prompt: string, answer: { text: string; usage_metadata?: { input_tokens: number; output_tokens: number; total_tokens: number } }) {
  const usage = answer.usage_metadata!;
  expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  if (kind === "mock") {
    expect(answer.text).toContain(prompt);
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeGreaterThan(0);
    return;
  }
  const expected = expectedOf(kind, mode);
  expect(answer.text).toBe(expected.text);
  expect({ input: usage.input_tokens, output: usage.output_tokens }).toEqual({ input: expected.inputTokens, output: expected.outputTokens });
}

describe.each(KINDS.map((kind) => [kind]))("upstream kind %s", (kind: KindName) => {
  const prompt = `Hello from LangChain to the ${kind} upstream`;

  describe.each([false, true].map((responses) => [responses]))("useResponsesApi %p", (useResponsesApi: boolean) => {
    const model = () => chatOpenAi(world, kind, { useResponsesApi });

    test("invoke: the upstream's text and usage", async () => {
      const answer = await model().invoke(prompt);
      expectAnswer(kind, "plain", prompt, answer);
      if (!useResponsesApi) expect(answer.response_metadata).toMatchObject({ finish_reason: "stop", model_name: MODELS[kind] });
      else expect(answer.response_metadata).toMatchObject({ status: "completed", model: MODELS[kind] });
    });

    test("stream (streamUsage): the chunks make the upstream's text, usage_metadata arrives", async () => {
      const whole = await streamedWhole(chatOpenAi(world, kind, { useResponsesApi, streamUsage: true }), prompt);
      expectAnswer(kind, "stream", prompt, whole);
      if (!useResponsesApi) expect(whole.response_metadata.finish_reason).toBe("stop");
    });

    test("bindTools: the upstream's call, and the ToolMessage sent back reaches it paired with the call", async () => {
      const { first, second } = await weatherToolRoundTrip(model());
      expect(first.tool_calls!.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "plain") }]);
      if (kind === "mock") expect(second.text).toContain("light rain");
      else expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
    });

    test("bindTools, streamed: the call's fragments make its arguments", async () => {
      if (kind === "openai") world.upstreams.openai.setBehavior({ streamFixture: ONE_CALL_STREAM });
      const { first } = await weatherToolRoundTrip(model(), true);
      expect(first.tool_calls!.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "stream") }]);
      if (kind !== "mock") expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
    });
  });

  test.skipIf(kind === "mock")("withStructuredOutput (json_schema, strict): the parsed object", async () => {
    const remote = kind as RemoteKind;
    answerWithText(world, remote, JSON.stringify(ADA));
    const parsed = await chatOpenAi(world, remote).withStructuredOutput(Person).invoke("Ada is 36.");
    expect(parsed).toEqual(ADA);
    expectAnswerSchemaUpstream(remote, lastUpstreamBody(world, remote), ["name", "age"]);
  });

  test("withStructuredOutput, method functionCalling: the parsed object", async () => {
    if (kind !== "mock") answerWithCall(world, kind, "extract", ADA);
    const parsed = await chatOpenAi(world, kind).withStructuredOutput(Person, { method: "functionCalling" }).invoke("Ada is 36.");
    // The mock fills the required fields.
    expect(parsed).toEqual(kind === "mock" ? { name: "mock", age: 1 } : ADA);
    if (kind !== "mock") expectForcedToolUpstream(kind, lastUpstreamBody(world, kind), "extract");
  });
});

test("the gateway's refusals raise with their status (402, 404), and a stream an upstream breaks off raises", async () => {
  await expectLangChainRefusals(world, (fields) => chatOpenAi(world, "mock", fields));
});
