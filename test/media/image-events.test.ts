import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { account, onlyUsageRowOf } from "../billing/_inprocess.ts";
import { accountClient, collect, fixtureBlocks, IMAGE_PROMPT, MODALITIES, MODELS, PARTIAL_IMAGES, sseAnswer, startEventStreamWorld, type EventStreamWorld } from "./_event-streams.ts";

/**
 * Images streamed as OpenAI's image_generation.* events (`stream: true`): what the openai
 * upstream is asked, the demo model's drafts and images, and what a stream is charged when it
 * ends after some of its images. What every stream shares is in event-streams.test.ts.
 */

let world: EventStreamWorld;
beforeAll(async () => {
  world = await startEventStreamWorld();
});
afterAll(() => world.close());
beforeEach(() => world.primary.reset());

const START = 10_000_000;
const { cost } = MODALITIES.images;

test("the openai upstream is asked to stream, with the mapped model, partial_images and the fields the gateway does not model", async () => {
  const stream = await world.client.images.generate({ model: MODELS.images.openai, prompt: IMAGE_PROMPT, stream: true, partial_images: 1, output_format: "webp", moderation: "low" });
  await collect(stream);
  expect(world.primary.requests.map((request) => request.body)).toEqual([
    { model: MODELS.images.upstream, prompt: IMAGE_PROMPT, n: 1, stream: true, partial_images: 1, output_format: "webp", moderation: "low" },
  ]);
});

test("the demo model sends partial_images drafts of each image, then the image itself: the very one it answers whole, charged per image", async () => {
  const { id, client } = await accountClient(world.gw, START);
  const whole = await client.images.generate({ model: MODELS.images.mock, prompt: IMAGE_PROMPT, n: 2, response_format: "b64_json" });
  const { data: stream, response } = await client.images.generate({ model: MODELS.images.mock, prompt: IMAGE_PROMPT, n: 2, stream: true, partial_images: PARTIAL_IMAGES }).withResponse();
  const { events, error } = await collect(stream);
  expect(error).toBeNull();
  const drafts = [0, 1].map((index) => ({ type: "image_generation.partial_image", partial_image_index: index, size: "1024x1024", quality: "standard" }));
  const completed = whole.data!.map((image) => ({ type: "image_generation.completed", b64_json: image.b64_json, size: "1024x1024", quality: "standard" }));
  expect(events).toMatchObject([...drafts, completed[0]!, ...drafts, completed[1]!]);
  const row = await onlyUsageRowOf(world.gw, response);
  expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 200, cost: 2 * cost.mock });
  // Two images answered whole, two streamed.
  expect((await account(world.gw, id)).balance_micros).toBe(START - 4 * cost.mock);
});

test("n 2, and the upstream fails after the first image is complete: the SDK raises after it, and that one image is charged (502 row)", async () => {
  const { id, client } = await accountClient(world.gw, START);
  const failure = `data: ${JSON.stringify({ type: "error", error: { message: "The image could not be finished", type: "server_error" } })}\n\n`;
  world.primary.setBehavior({ script: () => sseAnswer([...fixtureBlocks(MODALITIES.images.fixture), failure]) });
  const { data: stream, response } = await client.images.generate({ model: MODELS.images.openai, prompt: IMAGE_PROMPT, n: 2, stream: true, partial_images: PARTIAL_IMAGES }).withResponse();
  const { events, error } = await collect(stream);
  expect(events.at(-1).type).toBe("image_generation.completed");
  expect(error?.message).toContain("The image could not be finished");
  const row = await onlyUsageRowOf(world.gw, response);
  expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 502, cost: cost.openai });
  expect((await account(world.gw, id)).balance_micros).toBe(START - cost.openai);
});

test("n 2, and the upstream ends cleanly after one image: charged for the one image made, a 200", async () => {
  const { id, client } = await accountClient(world.gw, START);
  const { data: stream, response } = await client.images.generate({ model: MODELS.images.openai, prompt: IMAGE_PROMPT, n: 2, stream: true }).withResponse();
  const { events, error } = await collect(stream);
  expect(error).toBeNull();
  expect(events.at(-1).type).toBe("image_generation.completed");
  const row = await onlyUsageRowOf(world.gw, response);
  expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 200, cost: cost.openai });
  expect((await account(world.gw, id)).balance_micros).toBe(START - cost.openai);
});
