import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ANTHROPIC_STREAM_FIXTURE, anthropicFixtureEvents } from "../helpers/anthropic-upstream.ts";
import { answerWithCall, answerWithText, expectedOf, expectResultUpstream, KINDS, startWorld, WEATHER, type KindName, type RemoteKind, type World } from "../sdk/_support.ts";
import { ADA, chatAnthropic, expectAnswerSchemaUpstream, expectLangChainRefusals, expectedWeatherArgs, expectForcedToolUpstream, lastUpstreamBody, ONE_CALL_STREAM, Person, streamedWhole, weatherToolRoundTrip } from "./_legacy-support.ts";

/**
 * LangChain's ChatAnthropic (@langchain/anthropic, anthropicApiUrl the gateway's root) against
 * every upstream kind: invoke, stream, bindTools with a ToolMessage sent back, and
 * withStructuredOutput by a forced tool call (its default) and by output_config.format.
 * LangChain reads a stream's usage itself: the prompt's tokens from message_start alone, the
 * answer's as message_start's plus message_delta's.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** What the upstream's answer says for `mode`, in LangChain's usage_metadata names; the mock's own counts are positive. */
function expectUsage(kind: KindName, mode: "plain" | "stream", usage: { input_tokens: number; output_tokens: number; total_tokens: number }, counted?: { input: number; output: number }) {
  expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  if (kind === "mock" && !counted) {
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeGreaterThan(0);
    return;
  }
  const expected = counted ?? { input: expectedOf(kind as RemoteKind, mode).inputTokens, output: expectedOf(kind as RemoteKind, mode).outputTokens };
  expect({ input: usage.input_tokens, output: usage.output_tokens }).toEqual(expected);
}

describe.each(KINDS.map((kind) => [kind]))("upstream kind %s", (kind: KindName) => {
  const prompt = `Hello from LangChain to the ${kind} upstream`;

  test("invoke: the upstream's text, end_turn and its usage", async () => {
    const answer = await chatAnthropic(world, kind).invoke(prompt);
    if (kind === "mock") expect(answer.text).toContain(prompt);
    else expect(answer.text).toBe(expectedOf(kind, "plain").text);
    expect(answer.response_metadata.stop_reason).toBe("end_turn");
    expectUsage(kind, "plain", answer.usage_metadata!);
  });

  test("stream: the chunks make the upstream's text, and usage_metadata counts the prompt", async () => {
    const whole = await streamedWhole(chatAnthropic(world, kind), prompt);
    if (kind === "mock") expect(whole.text).toContain(prompt);
    else expect(whole.text).toBe(expectedOf(kind, "stream").text);
    const usage = whole.usage_metadata!;
    if (kind === "anthropic") {
      // Passed through: Anthropic's message_start output count is added to message_delta's by LangChain, as it is going direct.
      const started = anthropicFixtureEvents(ANTHROPIC_STREAM_FIXTURE)[0]!.data.message.usage;
      expectUsage(kind, "stream", usage, { input: started.input_tokens, output: started.output_tokens + expectedOf(kind, "stream").outputTokens });
    } else if (kind === "gemini") {
      expectUsage(kind, "stream", usage);
    } else {
      // An upstream that counts the prompt only at the end: message_start carries the gateway's estimate (4 characters a token).
      const plain = await chatAnthropic(world, kind).invoke(prompt);
      const answered = kind === "mock" ? plain.usage_metadata!.output_tokens : expectedOf(kind, "stream").outputTokens;
      expectUsage(kind, "stream", usage, { input: Math.ceil(prompt.length / 4), output: answered });
    }
  });

  test("bindTools: the upstream's call, and the ToolMessage sent back reaches it paired with the call", async () => {
    const { first, second } = await weatherToolRoundTrip(chatAnthropic(world, kind));
    expect(first.tool_calls!.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "plain") }]);
    if (kind === "mock") expect(second.text).toContain("light rain");
    else expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
  });

  test("bindTools, streamed: the call's fragments make its arguments", async () => {
    if (kind === "openai") world.upstreams.openai.setBehavior({ streamFixture: ONE_CALL_STREAM });
    const { first } = await weatherToolRoundTrip(chatAnthropic(world, kind), true);
    expect(first.tool_calls!.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "stream") }]);
    expect(first.usage_metadata!.output_tokens).toBeGreaterThan(0);
    if (kind !== "mock") expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
  });

  test("withStructuredOutput (a forced tool call): the parsed object", async () => {
    if (kind !== "mock") answerWithCall(world, kind, "extract", ADA);
    const parsed = await chatAnthropic(world, kind).withStructuredOutput(Person).invoke("Ada is 36.");
    // The mock fills the required fields.
    expect(parsed).toEqual(kind === "mock" ? { name: "mock", age: 1 } : ADA);
    if (kind !== "mock") expectForcedToolUpstream(kind, lastUpstreamBody(world, kind), "extract");
  });

  test.skipIf(kind === "mock")("withStructuredOutput, method jsonSchema (output_config.format): the parsed object", async () => {
    const remote = kind as RemoteKind;
    answerWithText(world, remote, JSON.stringify(ADA));
    const parsed = await chatAnthropic(world, remote).withStructuredOutput(Person, { method: "jsonSchema" }).invoke("Ada is 36.");
    expect(parsed).toEqual(ADA);
    expectAnswerSchemaUpstream(remote, lastUpstreamBody(world, remote), ["name", "age"]);
  });
});

test("the gateway's refusals raise with their status (402, 404), and a stream an upstream breaks off raises", async () => {
  await expectLangChainRefusals(world, (fields) => chatAnthropic(world, "mock", fields));
});
