import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { anthropicClient, createUserKey, MODELS, startWorld, type World } from "./_support.ts";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";

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

describe("anthropic models.list order: more recently released first, as Anthropic lists", () => {
  let gw: TestGateway;
  let client: Anthropic;
  const BOOT = Date.parse("2026-01-01T00:00:00Z");
  let clock = BOOT;
  /** Channels offered at three later times; the two of one channel tie on time and go by ID. */
  const NEWEST = ["order-new", "order-mid", "order-old-a", "order-old-b"];

  beforeAll(async () => {
    gw = await startTestGateway({ now: () => clock });
    for (const [at, models] of [[1, ["order-old-b", "order-old-a"]], [2, ["order-mid"]], [3, ["order-new"]]] as const) {
      clock = BOOT + at * 86_400_000;
      const created = await gw.admin("POST", "/v1/admin/channels", { name: `order ${at}`, type: "mock", models });
      expect(created.status).toBe(201);
    }
    client = anthropicClient(gw, gw.demoKey);
  });
  afterAll(() => gw.close());

  const everything = async () => {
    const models: Anthropic.ModelInfo[] = [];
    for await (const model of client.models.list({ limit: 1000 })) models.push(model);
    return models;
  };

  test("by the time the gateway first offered each model (its created_at), newest first, then by ID", async () => {
    const models = await everything();
    expect(models.slice(0, 4).map((m) => m.id)).toEqual(NEWEST);
    expect(models[0]!.created_at).toBe(new Date(BOOT + 3 * 86_400_000).toISOString());
    // The models offered at boot, all of one time, follow in ID order.
    const booted = models.slice(4);
    expect(booted.length).toBeGreaterThan(1);
    expect(booted.every((m) => Date.parse(m.created_at) === BOOT)).toBe(true);
    expect(booted.map((m) => m.id)).toEqual(booted.map((m) => m.id).sort());
  });

  test("first_id, last_id and has_more describe each page, and after_id pages forward in that order", async () => {
    const ids = (await everything()).map((m) => m.id);
    const first = await client.models.list({ limit: 2 });
    expect(first.data.map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect({ first_id: first.first_id, last_id: first.last_id, has_more: first.has_more }).toEqual({ first_id: ids[0]!, last_id: ids[1]!, has_more: true });
    const next = await client.models.list({ limit: 2, after_id: first.last_id! });
    expect(next.data.map((m) => m.id)).toEqual(ids.slice(2, 4));
    const paged: string[] = [];
    for await (const model of client.models.list({ limit: 2 })) paged.push(model.id);
    expect(paged).toEqual(ids);
    const end = await client.models.list({ limit: 2, after_id: ids.at(-2)! });
    expect({ data: end.data.map((m) => m.id), has_more: end.has_more }).toEqual({ data: ids.slice(-1), has_more: false });
  });

  test("before_id pages backward: the SDK follows first_id back to the newest model", async () => {
    const ids = (await everything()).map((m) => m.id);
    const back = await client.models.list({ limit: 2, before_id: "order-old-b" });
    expect(back.data.map((m) => m.id)).toEqual(["order-mid", "order-old-a"]);
    expect(back.has_more).toBe(true);
    const pages: string[][] = [];
    for await (const page of (await client.models.list({ limit: 2, before_id: ids.at(-1)! })).iterPages()) pages.push(page.data.map((m) => m.id));
    // Each page in list order, the pages from the last back to the first.
    expect(pages.reverse().flat()).toEqual(ids.slice(0, -1));
    const top = await client.models.list({ limit: 2, before_id: ids[1]! });
    expect({ data: top.data.map((m) => m.id), has_more: top.has_more }).toEqual({ data: ids.slice(0, 1), has_more: false });
  });

  test("a cursor naming a model this key may not list is a 400, whether or not it exists", async () => {
    const limited = await createUserKey(gw, { plan: "enterprise", balance: 10 }, { models: ["order-new", "order-old-a"] });
    const page = await anthropicClient(gw, limited.key).models.list({ after_id: "order-new" });
    expect(page.data.map((m) => m.id)).toEqual(["order-old-a"]);
    for (const [param, id] of [["after_id", "order-mid"], ["before_id", "no-such-model"]] as const) {
      const refused = await anthropicClient(gw, limited.key).models.list({ [param]: id }).catch((error) => error);
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
      expect(refused.error.error.message).toBe(`Invalid '${param}': '${id}' is not a model this key may use`);
    }
  });

  test("the OpenAI and Gemini lists keep their ID order", async () => {
    const openai = (await (await gw.fetch("/v1/models", { headers: bearer(gw.demoKey) })).json()).data.map((m: any) => m.id);
    expect(openai).toEqual([...openai].sort());
    const gemini = (await (await gw.fetch("/v1beta/models?pageSize=1000", { headers: bearer(gw.demoKey) })).json()).models.map((m: any) => m.name);
    expect(gemini).toEqual([...gemini].sort());
  });
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

describe("a model without a price, while the settings do not allow free models", () => {
  let gw: TestGateway;
  const UNPRICED = "listed-unpriced";
  const SHAPES: { label: string; list: string; one: string; headers: Record<string, string>; ids: (body: any) => string[] }[] = [
    { label: "OpenAI", list: "/v1/models", one: "/v1/models/", headers: {}, ids: (body) => body.data.map((m: any) => m.id) },
    { label: "Anthropic", list: "/v1/models", one: "/v1/models/", headers: { "anthropic-version": "2023-06-01" }, ids: (body) => body.data.map((m: any) => m.id) },
    { label: "Gemini", list: "/v1beta/models", one: "/v1beta/models/", headers: {}, ids: (body) => body.models.map((m: any) => m.name.replace("models/", "")) },
  ];
  beforeAll(async () => {
    gw = await startTestGateway({ strictPricing: true });
    const created = await gw.admin("POST", "/v1/admin/channels", { name: "unpriced", type: "mock", models: [UNPRICED] });
    expect(created.status).toBe(201);
  });
  afterAll(() => gw.close());

  const get = (path: string, headers: Record<string, string>) => gw.fetch(path, { headers: { ...bearer(gw.demoKey), ...headers } });
  const chatStatus = async () => {
    const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: UNPRICED, messages: [{ role: "user", content: "hi" }] }) });
    await response.text();
    return response.status;
  };

  test("is refused on request, and left out of every list and lookup (404), as a model the key cannot use", async () => {
    expect(await chatStatus()).toBe(400);
    for (const shape of SHAPES) {
      const ids = shape.ids(await (await get(shape.list, shape.headers)).json());
      expect({ shape: shape.label, priced: ids.includes("demo-chat"), unpriced: ids.includes(UNPRICED) }).toEqual({ shape: shape.label, priced: true, unpriced: false });
      const one = await get(shape.one + UNPRICED, shape.headers);
      await one.text();
      expect({ shape: shape.label, status: one.status }).toEqual({ shape: shape.label, status: 404 });
    }
  });

  test("is listed once the settings allow free models, as it is then served", async () => {
    expect((await gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: true })).status).toBe(200);
    try {
      expect(await chatStatus()).toBe(200);
      for (const shape of SHAPES) {
        expect(shape.ids(await (await get(shape.list, shape.headers)).json())).toContain(UNPRICED);
        const one = await get(shape.one + UNPRICED, shape.headers);
        await one.text();
        expect(one.status).toBe(200);
      }
    } finally {
      await gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: false });
    }
  });
});
