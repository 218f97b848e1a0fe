import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * Listing and looking up models through each SDK's own models API: the OpenAI shape for
 * the openai SDK (covered in test/chat), Anthropic's for @anthropic-ai/sdk, Gemini's for
 * @google/genai, each listing what the calling key may use.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

const chatModels = [MODELS.openai, MODELS.anthropic, MODELS.gemini];

test("anthropic models.list: Anthropic's model records, every chat model of the key", async () => {
  const models: Anthropic.ModelInfo[] = [];
  for await (const model of world.anthropic.models.list()) models.push(model);
  const ids = models.map((m) => m.id);
  for (const id of chatModels) expect(ids).toContain(id);
  for (const model of models) {
    expect(model.type).toBe("model");
    expect(model.display_name).toBe(model.id);
    expect(Number.isNaN(Date.parse(model.created_at))).toBe(false);
    // Every field the SDK's ModelInfo requires: a served model is active, what the gateway does not know is null.
    const { lifecycle, deprecated_at, retires_at, line, max_input_tokens, max_tokens, capabilities } = model;
    expect({ lifecycle, deprecated_at, retires_at, line, max_input_tokens, max_tokens, capabilities }).toEqual({
      lifecycle: "active",
      deprecated_at: null,
      retires_at: null,
      line: null,
      max_input_tokens: null,
      max_tokens: null,
      capabilities: null,
    });
  }
});

test("anthropic models.list pages by limit, after_id and before_id; the SDK's auto-paging reads every page", async () => {
  const everything: string[] = [];
  for await (const model of world.anthropic.models.list({ limit: 1000 })) everything.push(model.id);
  expect(everything.length).toBeGreaterThan(3);

  const first = await world.anthropic.models.list({ limit: 2 });
  expect(first.data.map((m) => m.id)).toEqual(everything.slice(0, 2));
  expect(first.has_more).toBe(true);
  expect(first.last_id).toBe(everything[1]!);
  const paged: string[] = [];
  for await (const model of world.anthropic.models.list({ limit: 2 })) paged.push(model.id);
  expect(paged).toEqual(everything);

  const back = await world.anthropic.models.list({ limit: 2, before_id: everything[3]! });
  expect(back.data.map((m) => m.id)).toEqual(everything.slice(1, 3));
  expect(back.has_more).toBe(true);
  const last = await world.anthropic.models.list({ limit: 2, after_id: everything.at(-2)! });
  expect(last.data.map((m) => m.id)).toEqual(everything.slice(-1));
  expect(last.has_more).toBe(false);

  const refused = await world.anthropic.models.list({ limit: 0 }).catch((error) => error);
  expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
  expect(refused.message).toContain("limit");
});

test("anthropic models.retrieve: one record, and NotFoundError for a model the key cannot use", async () => {
  const model = await world.anthropic.models.retrieve(MODELS.anthropic);
  expect(model).toMatchObject({ type: "model", id: MODELS.anthropic });
  const missing = await world.anthropic.models.retrieve("no-such-model").catch((error) => error);
  expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
});

test("genai models.list: Gemini's model records, chat models with generateContent", async () => {
  const names: string[] = [];
  const pager = await world.genai.models.list();
  for await (const model of pager) {
    names.push(model.name!);
    if (chatModels.includes(model.name!.replace("models/", ""))) expect(model.supportedActions).toContain("generateContent");
  }
  for (const id of chatModels) expect(names).toContain(`models/${id}`);
});

test("genai models.list pages by pageSize; the pager follows nextPageToken to the end", async () => {
  const everything: string[] = [];
  for await (const model of await world.genai.models.list({ config: { pageSize: 1000 } })) everything.push(model.name!);
  // Past 1000, Gemini cuts the page size rather than refuse it.
  const huge = await world.genai.models.list({ config: { pageSize: 5000 } });
  expect(huge.page.map((m) => m.name)).toEqual(everything.slice(0, 1000));
  const pager = await world.genai.models.list({ config: { pageSize: 2 } });
  expect(pager.page.map((m) => m.name)).toEqual(everything.slice(0, 2));
  const paged: string[] = [];
  for await (const model of pager) paged.push(model.name!);
  expect(paged).toEqual(everything);
});

test("genai models.get: one record by name, and an ApiError 404 for a model the key cannot use", async () => {
  const model = await world.genai.models.get({ model: MODELS.gemini });
  expect(model.name).toBe(`models/${MODELS.gemini}`);
  expect(model.displayName).toBe(MODELS.gemini);
  const missing = await world.genai.models.get({ model: "no-such-model" }).catch((error) => error);
  expect(missing).toBeInstanceOf(ApiError);
  expect(missing.status).toBe(404);
});
