import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway } from "../helpers/gateway.ts";
import { KEEP_RESPONSES_MS } from "../../src/state/kept-responses.ts";
import { createResponse, createUserKey, MODELS, openAiClient, rejectionOf, startWorld, type World } from "./_support.ts";

/**
 * The Responses the gateway keeps, through the openai SDK as OpenAI's stored ones are
 * reached: `responses.retrieve`, `.delete` and `.inputItems.list`, for their owner alone (the
 * same 404 for another user's as for none), for an hour, within a bound on their text.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The 404 retrieving `id` gets with `client`. */
async function notFound(id: string, client = world.openai): Promise<InstanceType<typeof OpenAI.NotFoundError>> {
  const error = await rejectionOf(client.responses.retrieve(id));
  expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  expect(error.type).toBe("not_found_error");
  return error;
}

describe("retrieve", () => {
  test.each([["openai"], ["anthropic"], ["mock"]] as const)("a whole Response of the %s channel, as it was returned", async (kind) => {
    const created = await world.openai.responses.create({ model: MODELS[kind], instructions: "Be brief", input: "Hello", metadata: { team: "a" } });
    const retrieved = await world.openai.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    expect(retrieved.output_text).toBe(created.output_text);
  });

  test("a streamed Response, as its response.completed event gave it", async () => {
    const stream = await world.openai.responses.create({ model: MODELS.anthropic, input: "Hello", stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    expect(completed).toBeDefined();
    expect(await world.openai.responses.retrieve(completed!.id)).toMatchObject(JSON.parse(JSON.stringify(completed)));
  });

  test("another user's id is a 404 with the very message of an id never made", async () => {
    const mine = await world.openai.responses.create({ model: MODELS.mock, input: "Mine" });
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 });
    const stranger = openAiClient(world.gw, key);
    const theirs = await notFound(mine.id, stranger);
    const never = await notFound("resp_never", stranger);
    expect(never.message).toContain("No response with id 'resp_never' is kept here");
    expect(theirs.message).toBe(never.message.replace("resp_never", mine.id));
    // Nor can they delete it, or list its items.
    expect(await rejectionOf(stranger.responses.delete(mine.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(stranger.responses.inputItems.list(mine.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await world.openai.responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  test("stream: true is a 400: the events are not kept to be replayed", async () => {
    const made = await world.openai.responses.create({ model: MODELS.mock, input: "Hello" });
    const error = await rejectionOf(world.openai.responses.retrieve(made.id, { stream: true }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("stream");
  });

  test("a Response asked with store: false, or whose stream failed, is not kept", async () => {
    const unstored = await world.openai.responses.create({ model: MODELS.mock, input: "Hello", store: false });
    await notFound(unstored.id);
    world.upstreams.openai.setBehavior({ cutAfterEvents: 3, streamEnd: "abort" });
    const stream = await world.openai.responses.create({ model: MODELS.openai, input: "Hello", stream: true });
    let id = "";
    for await (const event of stream) if (event.type === "response.failed") id = event.response.id;
    expect(id).toMatch(/^resp_/);
    await notFound(id);
  });
});

describe("delete", () => {
  test("answers as OpenAI does, and the Response, its items and its chain are gone", async () => {
    const made = await world.openai.responses.create({ model: MODELS.mock, input: "Hello" });
    const deleted = await world.gw.fetch(`/v1/responses/${made.id}`, { method: "DELETE", headers: bearer(world.key) });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: made.id, object: "response", deleted: true });
    await notFound(made.id);
    expect(await rejectionOf(world.openai.responses.delete(made.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await rejectionOf(world.openai.responses.create({ model: MODELS.mock, input: "Go on", previous_response_id: made.id }));
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    const referred = await rejectionOf(world.openai.responses.create({ model: MODELS.mock, input: [{ type: "item_reference", id: made.output[0]!.id! }] }));
    expect(referred).toBeInstanceOf(OpenAI.BadRequestError);
  });

  test("through the SDK, which resolves with the answer's body", async () => {
    const made = await world.openai.responses.create({ model: MODELS.mock, input: "Hello" });
    expect(await world.openai.responses.delete(made.id)).toEqual({ id: made.id, object: "response", deleted: true } as any);
    await notFound(made.id);
  });
});

describe("input_items", () => {
  test("a Response's own input items, newest first unless asked, page by page, an item referred to under its own id", async () => {
    const first = await world.openai.responses.create({ model: MODELS.mock, input: "Hello" });
    const answer = first.output[0]!;
    const second = await world.openai.responses.create({
      model: MODELS.mock,
      input: [{ role: "user", content: "Hello" }, { type: "item_reference", id: answer.id! }, { role: "user", content: [{ type: "input_text", text: "Again" }] }],
      previous_response_id: first.id,
    });
    const newestFirst = await world.openai.responses.inputItems.list(second.id);
    expect(newestFirst.data.map((item: any) => [item.type, item.role, item.content[0].text])).toEqual([
      ["message", "user", "Again"],
      ["message", "assistant", first.output_text],
      ["message", "user", "Hello"],
    ]);
    expect(newestFirst.data[1]).toEqual(answer as any);
    expect(newestFirst.data[2]).toMatchObject({ id: expect.stringMatching(/^msg_/), status: "completed", content: [{ type: "input_text", text: "Hello" }] });
    expect(newestFirst.has_more).toBe(false);

    const paged: string[] = [];
    for await (const item of world.openai.responses.inputItems.list(second.id, { order: "asc", limit: 1 })) paged.push(item.id);
    expect(paged).toEqual(newestFirst.data.map((item) => item.id).reverse());
    // A string input is one user message.
    expect((await world.openai.responses.inputItems.list(first.id)).data).toMatchObject([{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] }]);
  });

  test("an unknown cursor or order is a 400 naming it", async () => {
    const made = await world.openai.responses.create({ model: MODELS.mock, input: "Hello" });
    for (const [query, param] of [[{ after: "msg_none" }, "after"], [{ order: "sideways" }, "order"]] as const) {
      const error = await rejectionOf(world.openai.responses.inputItems.list(made.id, query as any));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
    }
  });
});

test("an hour after it was made a Response is gone: retrieve is a 404, continuing it a 400", async () => {
  let now = Date.now();
  const gw = await startTestGateway({ now: () => now });
  try {
    const client = openAiClient(gw, gw.demoKey);
    const made = await client.responses.create({ model: MODELS.mock, input: "Hello" });
    now += KEEP_RESPONSES_MS - 1;
    expect((await client.responses.retrieve(made.id)).id).toBe(made.id);
    now += 1;
    expect(await rejectionOf(client.responses.retrieve(made.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await rejectionOf(client.responses.create({ model: MODELS.mock, input: "Go on", previous_response_id: made.id }));
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    expect(continued.message).toContain(`No response '${made.id}' is kept here`);
  } finally {
    await gw.close();
  }
});

test.each([[false], [true]])("past GATEWAY_KEPT_RESPONSES_MAX_CHARS, the oldest chain loses its first link (streamed: %p)", async (stream) => {
  // A bound that holds two chains of a long first question and a short second one, not three.
  const gw = await startTestGateway({ env: { GATEWAY_KEPT_RESPONSES_MAX_CHARS: "50000" } });
  try {
    const client = openAiClient(gw, gw.demoKey);
    const chain = async (letter: string) => {
      const first = await createResponse(client, { model: MODELS.mock, input: letter.repeat(20_000) }, stream);
      return createResponse(client, { model: MODELS.mock, input: "Go on", previous_response_id: first.id }, stream);
    };
    const oldest = await chain("a");
    const middle = await chain("b");
    expect((await createResponse(client, { model: MODELS.mock, input: "More", previous_response_id: oldest.id }, stream)).status).toBe("completed");
    await chain("c");
    const broken = await rejectionOf(createResponse(client, { model: MODELS.mock, input: "More", previous_response_id: oldest.id }, stream));
    expect(broken).toBeInstanceOf(OpenAI.BadRequestError);
    expect(broken.message).toContain(`which '${oldest.id}' continues, is not kept here`);
    expect((await createResponse(client, { model: MODELS.mock, input: "More", previous_response_id: middle.id }, stream)).status).toBe("completed");
  } finally {
    await gw.close();
  }
});
