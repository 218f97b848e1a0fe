import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Content, FunctionCall, GoogleGenerativeAIFetchError } from "@google/generative-ai";
import { expectResultUpstream, KINDS, MODELS, rejectionOf, startWorld, WEATHER, WEATHER_REPORT, type KindName, type World } from "../sdk/_support.ts";
import { expectedWeatherArgs, lastUpstreamBody, legacyModel, legacyWeatherTool, ONE_CALL_STREAM } from "./_legacy-support.ts";

/**
 * Function calling through Google's legacy SDK on every upstream kind: the model declares
 * functionDeclarations (SchemaType's lower-case types), the answer's functionCalls() are the
 * upstream's call, and the functionResponse sent back reaches the upstream paired with it. A
 * chat session keeps a turn in its history only when the aggregated answer has no empty text
 * part, so a streamed call must come in a chunk of its own content, as Gemini sends it.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const QUESTION = "What is the weather in Paris?";

describe.each(KINDS.map((kind) => [kind]))("upstream kind %s", (kind: KindName) => {
  test("generateContent: functionCalls() is the upstream's call; the functionResponse sent back reaches it paired with the call", async () => {
    const model = legacyModel(world, MODELS[kind], { tools: [legacyWeatherTool] });
    const asked: Content = { role: "user", parts: [{ text: QUESTION }] };
    const first = await model.generateContent({ contents: [asked] });
    const calls = first.response.functionCalls()!;
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "plain") as object }]);
    // The turn as the SDK's users send it back: Gemini takes function responses in a user turn.
    const called = first.response.candidates![0]!.content;
    const answered: Content = { role: "user", parts: calls.map((call) => ({ functionResponse: { name: call.name, response: WEATHER_REPORT } })) };
    const second = await model.generateContent({ contents: [asked, called, answered] });
    if (kind === "mock") expect(second.response.text()).toContain("light rain");
    else expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
  });

  test.skipIf(kind === "gemini")("a chat session's streamed call stays in its history, so the functionResponse it sends next is paired with it", async () => {
    if (kind === "openai") world.upstreams.openai.setBehavior({ streamFixture: ONE_CALL_STREAM });
    const chat = legacyModel(world, MODELS[kind], { tools: [legacyWeatherTool] }).startChat();
    const streamed = await chat.sendMessageStream(QUESTION);
    const chunkCalls: FunctionCall[] = [];
    for await (const chunk of streamed.stream) chunkCalls.push(...(chunk.functionCalls() ?? []));
    const aggregated = (await streamed.response).functionCalls()!;
    expect(aggregated).toEqual(chunkCalls);
    expect(aggregated.map(({ name, args }) => ({ name, args }))).toEqual([{ name: WEATHER.name, args: expectedWeatherArgs(kind, "stream") as object }]);
    expect((await chat.getHistory()).map((content) => content.role)).toEqual(["user", "model"]);

    const after = await chat.sendMessage(aggregated.map((call) => ({ functionResponse: { name: call.name, response: WEATHER_REPORT } })));
    if (kind === "mock") expect(after.response.text()).toContain("light rain");
    else expectResultUpstream(kind, lastUpstreamBody(world, kind), WEATHER.name);
    expect((await chat.getHistory()).map((content) => content.role)).toEqual(["user", "model", "function", "model"]);
  });
});

test("a chat session's functionResponse turn reaches a gemini upstream as the SDK wrote it (role 'function'), and Gemini's 400 reaches the caller", async () => {
  const chat = legacyModel(world, MODELS.gemini, { tools: [legacyWeatherTool] }).startChat();
  const streamed = await chat.sendMessageStream(QUESTION);
  const calls = (await streamed.response).functionCalls()!;
  expect(calls.map((call) => call.name)).toEqual([WEATHER.name]);
  const error: GoogleGenerativeAIFetchError = await rejectionOf(chat.sendMessage(calls.map((call) => ({ functionResponse: { name: call.name, response: WEATHER_REPORT } }))));
  expect(error.status).toBe(400);
  expect(error.message).toContain("valid role");
  expect(lastUpstreamBody(world, "gemini").contents.map((content: Content) => content.role)).toEqual(["user", "model", "function"]);
});
