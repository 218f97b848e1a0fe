import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { conversationReceived, createResponse, createUserKey, MODELS, openAiClient, rejectionOf, startWorld, type World } from "./_support.ts";

/**
 * Two gateway instances on one database file, as behind a load balancer: a Response kept by
 * one is continued, referred to, retrieved, listed and deleted through the other, with the
 * openai SDK as agent frameworks chain their turns, and each user's are theirs alone on both.
 */

let world: World;
/** The second instance, on the world's database. */
let other: TestGateway;
/** The world's user's client on each instance. */
let onA: OpenAI;
let onB: OpenAI;

beforeAll(async () => {
  world = await startWorld();
  other = await startTestGateway({ dir: world.gw.dir });
  onA = world.openai;
  onB = openAiClient(other, world.key);
});
afterAll(async () => {
  await other.close({ keepFiles: true });
  await world.close();
});
beforeEach(() => world.reset());

describe.each([[false], [true]])("streamed: %p", (stream) => {
  test("a chain whose turns go to either instance is sent whole to the upstream by each", async () => {
    const model = MODELS.openai;
    const first = await createResponse(onA, { model, input: "Turn one" }, stream);
    const second = await createResponse(onB, { model, input: "Turn two", previous_response_id: first.id }, stream);
    expect(second.previous_response_id).toBe(first.id);
    const third = await createResponse(onA, { model, input: "Turn three", previous_response_id: second.id }, stream);
    expect(third.status).toBe("completed");
    expect(conversationReceived(world, "openai")).toEqual([
      { role: "user", text: "Turn one" },
      { role: "assistant", text: first.output_text },
      { role: "user", text: "Turn two" },
      { role: "assistant", text: second.output_text },
      { role: "user", text: "Turn three" },
    ]);
  });

  test("an output item made on one instance is found by item_reference on the other", async () => {
    const first = await createResponse(onA, { model: MODELS.openai, input: "Hello" }, stream);
    const answer = first.output[0]!;
    await createResponse(onB, { model: MODELS.openai, input: [{ role: "user", content: "Hello" }, { type: "item_reference", id: answer.id! }, { role: "user", content: "Again" }] }, stream);
    expect(conversationReceived(world, "openai")).toEqual([
      { role: "user", text: "Hello" },
      { role: "assistant", text: first.output_text },
      { role: "user", text: "Again" },
    ]);
  });
});

test("a Response made on one instance is retrieved and its input items listed on the other", async () => {
  const made = await onA.responses.create({ model: MODELS.mock, instructions: "Be brief", input: "Hello" });
  expect(await onB.responses.retrieve(made.id)).toEqual(made);
  const items = await onB.responses.inputItems.list(made.id);
  expect(items.data).toMatchObject([{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] }]);
});

test("deleted on one instance, a Response is gone on the other: retrieve 404, continue and refer 400", async () => {
  const made = await onA.responses.create({ model: MODELS.mock, input: "Hello" });
  const deleted = await other.fetch(`/v1/responses/${made.id}`, { method: "DELETE", headers: bearer(world.key) });
  expect(deleted.status).toBe(200);
  expect(await deleted.json()).toEqual({ id: made.id, object: "response", deleted: true });
  expect(await rejectionOf(onA.responses.retrieve(made.id))).toBeInstanceOf(OpenAI.NotFoundError);
  expect(await rejectionOf(onA.responses.delete(made.id))).toBeInstanceOf(OpenAI.NotFoundError);
  const continued = await rejectionOf(onA.responses.create({ model: MODELS.mock, input: "Go on", previous_response_id: made.id }));
  expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
  expect(continued.param).toBe("previous_response_id");
  const referred = await rejectionOf(onA.responses.create({ model: MODELS.mock, input: [{ type: "item_reference", id: made.output[0]!.id! }] }));
  expect(referred).toBeInstanceOf(OpenAI.BadRequestError);
  expect(referred.param).toBe("input[0]");
});

test("another user's Response is theirs alone on both instances, the same 404 and 400 as an id never made", async () => {
  const mine = await onA.responses.create({ model: MODELS.mock, input: "Mine" });
  const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 });
  for (const gw of [world.gw, other]) {
    const stranger = openAiClient(gw, key);
    const theirs = await rejectionOf(stranger.responses.retrieve(mine.id));
    const never = await rejectionOf(stranger.responses.retrieve("resp_never"));
    expect(theirs).toBeInstanceOf(OpenAI.NotFoundError);
    expect(theirs.message).toBe(never.message.replace("resp_never", mine.id));
    const continued = await rejectionOf(stranger.responses.create({ model: MODELS.mock, input: "Go on", previous_response_id: mine.id }));
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    expect(continued.message).toContain(`No response '${mine.id}' is kept here`);
    expect(await rejectionOf(stranger.responses.create({ model: MODELS.mock, input: [{ type: "item_reference", id: mine.output[0]!.id! }] }))).toBeInstanceOf(
      OpenAI.BadRequestError,
    );
    expect(await rejectionOf(stranger.responses.delete(mine.id))).toBeInstanceOf(OpenAI.NotFoundError);
  }
  expect((await onB.responses.retrieve(mine.id)).id).toBe(mine.id);
});
