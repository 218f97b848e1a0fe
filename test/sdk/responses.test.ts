import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { expectedOf, expectWeatherResultSent, KINDS, MODELS, onlyRequest, responsesWeatherTool, startWorld, UPSTREAM_MODELS, WEATHER_REPORT, type KindName, type World } from "./_support.ts";

/**
 * The openai SDK's recommended call, `responses.create` (and `responses.stream`), against
 * every upstream kind: POST /v1/responses is translated through the canonical form, so each
 * kind's own fixture answer comes back as a Response, its text in `output_text`, its usage in
 * the Responses API's names.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

type Event = OpenAI.Responses.ResponseStreamEvent;

/** Every event of a stream numbered from 0, one after another, opening with created and in_progress. */
function expectWellFormed(events: Event[], last: string) {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events.slice(0, 2).map((e) => e.type)).toEqual(["response.created", "response.in_progress"]);
  expect(events.at(-1)!.type).toBe(last as Event["type"]);
  const added = events.filter((e) => e.type === "response.output_item.added").length;
  expect(events.filter((e) => e.type === "response.output_item.done").length).toBe(added);
}

/** A Response's function calls, arguments parsed. */
function callsOf(response: OpenAI.Responses.Response) {
  return response.output.flatMap((item) => (item.type === "function_call" ? [{ name: item.name, args: JSON.parse(item.arguments) }] : []));
}

describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
  const model = MODELS[kind];
  const prompt = `Hi from responses.create to the ${kind} upstream`;

  test("create: the upstream's text in output_text, its usage, the caller's model", async () => {
    const response = await world.openai.responses.create({ model, input: prompt });
    expect(response).toMatchObject({ object: "response", status: "completed", model, error: null, incomplete_details: null });
    expect(response.id).toBe(`resp_${response._request_id!.slice("req_".length)}`);
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(response.output[0]!.id).toMatch(/^msg_/);
    const usage = response.usage!;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    if (kind === "mock") {
      expect(response.output_text).toContain(prompt);
      expect(usage.output_tokens).toBeGreaterThan(0);
      return;
    }
    const expected = expectedOf(kind, "plain");
    expect(response.output_text).toBe(expected.text);
    expect({ input: usage.input_tokens, output: usage.output_tokens }).toEqual({ input: expected.inputTokens, output: expected.outputTokens });
    const received = onlyRequest(world, kind);
    expect(received.body.stream ?? false).toBe(false);
    if (kind === "gemini") expect(received.model).toBe(UPSTREAM_MODELS.gemini);
    else expect(received.body.model).toBe(UPSTREAM_MODELS[kind]);
    // An openai channel is sent a chat completion, not the Responses API.
    if (kind === "openai") expect(received.path).toBe("/v1/chat/completions");
  });

  test("stream helper: the same text event by event, finalResponse() with usage", async () => {
    const stream = world.openai.responses.stream({ model, input: prompt });
    const events: Event[] = [];
    let deltas = "";
    for await (const event of stream) {
      events.push(event);
      if (event.type === "response.output_text.delta") deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expectWellFormed(events, "response.completed");
    expect(events.filter((e) => e.type === "response.output_text.delta").length).toBeGreaterThan(1);
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe(deltas);
    const done = events.find((e) => e.type === "response.output_text.done") as OpenAI.Responses.ResponseTextDoneEvent;
    expect(done.text).toBe(deltas);
    if (kind === "mock") {
      expect(deltas).toBe((await world.openai.responses.create({ model, input: prompt })).output_text);
      return;
    }
    const expected = expectedOf(kind, "stream");
    expect(deltas).toBe(expected.text);
    expect({ input: final.usage!.input_tokens, output: final.usage!.output_tokens }).toEqual({ input: expected.inputTokens, output: expected.outputTokens });
    const received = onlyRequest(world, kind);
    if (kind === "gemini") expect(received.action).toBe("streamGenerateContent");
    else expect(received.body.stream).toBe(true);
  });

  test("create({stream: true}): the raw events, response.completed carrying the whole Response", async () => {
    const stream = await world.openai.responses.create({ model, input: prompt, stream: true });
    const events: Event[] = [];
    for await (const event of stream) events.push(event);
    expectWellFormed(events, "response.completed");
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(created.response).toMatchObject({ status: "in_progress", model, output: [] });
    expect(completed.response.id).toBe(created.response.id);
    expect(completed.response.status).toBe("completed");
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(completed.response.output).toEqual([
      { type: "message", id: expect.stringMatching(/^msg_/), status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] },
    ]);
    expect(completed.response.usage!.output_tokens).toBeGreaterThan(0);
  });

  test("function tool, create: function_call items, then their outputs back in a second turn", async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await world.openai.responses.create({ model, input, tools: [responsesWeatherTool] });
    const calls = first.output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.id).toMatch(/^fc_/);
      expect(call.call_id).toBeTruthy();
      expect(call.status).toBe("completed");
    }
    if (kind === "mock") expect(callsOf(first).map((c) => c.name)).toEqual(["get_weather"]);
    else expect(callsOf(first)).toEqual(expectedOf(kind, "plain", true).tools);

    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    for (const call of calls) input.push({ type: "function_call_output", call_id: call.call_id, output: JSON.stringify(WEATHER_REPORT) });
    const second = await world.openai.responses.create({ model, input, tools: [responsesWeatherTool] });
    expect(second.status).toBe("completed");
    expectWeatherResultSent(world, kind, second.output_text);
  });

  test("function tool, streamed: arguments delta by delta, the calls in finalResponse()", async () => {
    const stream = world.openai.responses.stream({ model, input: "What is the weather in Paris?", tools: [responsesWeatherTool] });
    const events: Event[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expectWellFormed(events, "response.completed");
    if (kind === "mock") expect(callsOf(final).map((c) => c.name)).toEqual(["get_weather"]);
    else expect(callsOf(final)).toEqual(expectedOf(kind, "stream", true).tools);
    for (const item of final.output.filter((i) => i.type === "function_call")) {
      const deltas = events.flatMap((e) => (e.type === "response.function_call_arguments.delta" && e.item_id === item.id ? [e.delta] : [])).join("");
      expect(deltas).toBe(item.arguments);
      const done = events.find((e) => e.type === "response.function_call_arguments.done" && e.item_id === item.id);
      expect(done).toMatchObject({ arguments: item.arguments });
    }
  });
});
