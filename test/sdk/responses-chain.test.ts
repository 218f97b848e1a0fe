import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import {
  conversationReceived,
  createResponse,
  createUserKey,
  expectWeatherResultSent,
  MODELS,
  openAiClient,
  rejectionOf,
  responsesWeatherTool,
  startWorld,
  WEATHER_REPORT,
  type ConversationTurn,
  type World,
} from "./_support.ts";

/**
 * A conversation held by `previous_response_id` through the openai SDK: the gateway keeps each
 * Response it gave (unless asked with store: false), and a request that names one is sent
 * the whole chain before its own input, on every upstream kind, whole and streamed. A chain
 * with a link not kept is a 400 that says why, the same whoever's the id is.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

describe.each([
  ["openai", false],
  ["openai", true],
  ["anthropic", false],
  ["anthropic", true],
  ["mock", false],
  ["mock", true],
] as const)("three turns by previous_response_id, %s channel, streamed: %p", (kind, stream) => {
  const model = MODELS[kind];

  test("each request is sent the whole conversation in order, with only its own instructions", async () => {
    const client = world.openai;
    const first = await createResponse(client, { model, instructions: "Be brief", input: "Turn one" }, stream);
    const second = await createResponse(client, { model, input: "Turn two", previous_response_id: first.id }, stream);
    expect(second.previous_response_id).toBe(first.id);
    const third = await createResponse(client, { model, instructions: "Answer in French", input: [{ role: "user", content: "Turn three" }], previous_response_id: second.id }, stream);
    expect(third.status).toBe("completed");
    const whole: ConversationTurn[] = [
      { role: "user", text: "Turn one" },
      { role: "assistant", text: first.output_text },
      { role: "user", text: "Turn two" },
      { role: "assistant", text: second.output_text },
      { role: "user", text: "Turn three" },
    ];
    if (kind === "mock") {
      // The demo model echoes the last turn and counts the prompt it was given: the same as the whole conversation sent inline.
      expect(third.output_text).toContain("Turn three");
      const inline = await client.responses.create({ model, instructions: "Answer in French", input: whole.map(({ role, text }) => ({ role: role as "user", content: text })) });
      expect(third.usage!.input_tokens).toBe(inline.usage!.input_tokens);
      expect(third.usage!.input_tokens).toBeGreaterThan(second.usage!.input_tokens);
      return;
    }
    const requests = world.upstreams[kind].requests;
    expect(requests).toHaveLength(3);
    expect(conversationReceived(world, kind)).toEqual([{ role: "system", text: "Answer in French" }, ...whole]);
    // The second turn named no instructions, and the first one's are not carried.
    const secondBody = requests[1]!.body;
    expect(JSON.stringify(secondBody)).not.toContain("Be brief");
    expect(secondBody.messages).toHaveLength(3);
  });
});

describe.each([["openai"], ["anthropic"], ["mock"]] as const)("a tool loop by previous_response_id, %s channel", (kind) => {
  test("the function's output answers the call of the Response it continues", async () => {
    const tools = [responsesWeatherTool];
    const model = MODELS[kind];
    const first = await world.openai.responses.create({ model, input: "What is the weather in Paris?", tools });
    const calls = first.output.filter((item) => item.type === "function_call");
    expect(calls.length).toBeGreaterThan(0);
    const outputs = calls.map((call) => ({ type: "function_call_output" as const, call_id: call.call_id, output: JSON.stringify(WEATHER_REPORT) }));
    const second = await world.openai.responses.create({ model, input: outputs, tools, previous_response_id: first.id });
    expect(second.status).toBe("completed");
    expectWeatherResultSent(world, kind, second.output_text);
  });
});

describe("input_tokens counts the conversation a request continues", () => {
  test("the same count as the whole conversation sent inline", async () => {
    const first = await world.openai.responses.create({ model: MODELS.mock, input: "Turn one" });
    const chained = await world.openai.responses.inputTokens.count({ model: MODELS.mock, input: "Turn two", previous_response_id: first.id });
    const inline = await world.openai.responses.inputTokens.count({
      model: MODELS.mock,
      input: [
        { role: "user", content: "Turn one" },
        { role: "assistant", content: first.output_text },
        { role: "user", content: "Turn two" },
      ],
    });
    const alone = await world.openai.responses.inputTokens.count({ model: MODELS.mock, input: "Turn two" });
    expect(chained.input_tokens).toBe(inline.input_tokens);
    expect(chained.input_tokens).toBeGreaterThan(alone.input_tokens);
  });

  test("one that names no kept Response is a 400 naming previous_response_id", async () => {
    const error = await rejectionOf(world.openai.responses.inputTokens.count({ model: MODELS.anthropic, input: "Hi", previous_response_id: "resp_nothing" }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("previous_response_id");
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
  });
});

/** The 400 a request continuing `id` gets, with `client`, sent nowhere. */
async function refusal(id: string, client = world.openai, fields: Record<string, unknown> = {}): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
  const error = await rejectionOf(client.responses.create({ model: MODELS.openai, input: "Go on", previous_response_id: id, ...fields }));
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  expect(error.type).toBe("invalid_request_error");
  expect(world.upstreams.openai.requests).toHaveLength(0);
  return error;
}

describe("400: a previous_response_id whose chain is not all kept for the caller", () => {
  test("an id never made: the message says none is kept here, and why that can be", async () => {
    const error = await refusal("resp_never");
    expect(error.param).toBe("previous_response_id");
    expect(error.message).toContain("No response 'resp_never' is kept here");
    for (const why of ["an hour", "the user whose key asked", "store: false", "database failed to write", "deleted"]) expect(error.message).toContain(why);
  });

  test("another user's id gets the very message of an id never made", async () => {
    const theirs = await world.openai.responses.create({ model: MODELS.mock, input: "Mine" });
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 });
    const error = await refusal(theirs.id, openAiClient(world.gw, key));
    const never = await refusal("resp_never", openAiClient(world.gw, key));
    expect(error.message).toBe(never.message.replace("resp_never", theirs.id));
  });

  test("a Response asked with store: false is not kept, as OpenAI stores none then", async () => {
    const unstored = await world.openai.responses.create({ model: MODELS.mock, input: "Hi", store: false });
    expect((await refusal(unstored.id)).message).toContain(`No response '${unstored.id}'`);
  });

  test("a link deleted earlier in the chain is named", async () => {
    const first = await world.openai.responses.create({ model: MODELS.mock, input: "Turn one" });
    const second = await world.openai.responses.create({ model: MODELS.mock, input: "Turn two", previous_response_id: first.id });
    await world.openai.responses.delete(first.id);
    const error = await refusal(second.id);
    expect(error.message).toContain(`Response '${first.id}', which '${second.id}' continues, is not kept here`);
  });

  test("streamed too, before the stream begins", async () => {
    const error = await rejectionOf(world.openai.responses.create({ model: MODELS.openai, input: "Go on", previous_response_id: "resp_never", stream: true }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("previous_response_id");
  });

  test("beside conversation, which OpenAI refuses beside it too", async () => {
    const first = await world.openai.responses.create({ model: MODELS.mock, input: "Turn one" });
    const error = await refusal(first.id, world.openai, { conversation: "conv_1" });
    expect(error.message).toContain("conversation");
  });
});
