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
  }
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

test("genai models.get: one record by name, and an ApiError 404 for a model the key cannot use", async () => {
  const model = await world.genai.models.get({ model: MODELS.gemini });
  expect(model.name).toBe(`models/${MODELS.gemini}`);
  expect(model.displayName).toBe(MODELS.gemini);
  const missing = await world.genai.models.get({ model: "no-such-model" }).catch((error) => error);
  expect(missing).toBeInstanceOf(ApiError);
  expect(missing.status).toBe(404);
});
