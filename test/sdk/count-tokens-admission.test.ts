import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { bearer } from "../helpers/common.ts";
import { startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { GEMINI_COUNT_FIXTURE, geminiInvalidKeyBody } from "../helpers/gemini-upstream.ts";
import { anthropicClient, createChannel, createUserKey, genaiClient, MODELS, rejectionOf, startWorld, UPSTREAM_MODELS, type World } from "./_support.ts";

/**
 * Token counting is admitted like chat but costs nothing: the same key and model checks, one
 * request against the key's requests per minute, and no price, hold, usage row or ledger row.
 * Upstream errors map as chat's do, and a failing channel fails over to the next.
 */

let world: World;
/** An anthropic upstream that fails every request with the status its behaviour sets. */
let failing: AnthropicUpstream;
beforeAll(async () => {
  world = await startWorld();
  failing = await startAnthropicUpstream();
});
afterAll(async () => {
  await world.close();
  await failing.close();
});
beforeEach(() => {
  world.reset();
  failing.reset();
});

const GEMINI_COUNT: number = jsonFixture(GEMINI_COUNT_FIXTURE).totalTokens;
const MESSAGES = [{ role: "user" as const, content: "Count me" }];

/** POSTs `body` to a counting endpoint with the world's key as a Bearer token; status and parsed body. */
async function post(path: string, body: string): Promise<{ status: number; body: any }> {
  const response = await world.gw.fetch(path, { method: "POST", headers: bearer(world.key), body });
  return { status: response.status, body: await response.json() };
}

describe("upstream errors map as chat's do", () => {
  test("an anthropic 400 stays 400: the SDK's BadRequestError with the upstream's message", async () => {
    world.upstreams.anthropic.setBehavior({ status: 400 });
    const error = await rejectionOf(world.anthropic.messages.countTokens({ model: MODELS.anthropic, messages: MESSAGES }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.message).toContain("text content blocks must be non-empty");
  });

  test("a gemini 400 stays 400 for the genai SDK", async () => {
    world.upstreams.gemini.setBehavior({ status: 400 });
    const error = await rejectionOf(world.genai.models.countTokens({ model: MODELS.gemini, contents: "Count me" }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
  });

  test("a channel key the upstream rejects is the gateway's 502: anthropic's 401, gemini's 400 API_KEY_INVALID", async () => {
    world.upstreams.anthropic.setBehavior({ status: 401 });
    const anthropicError = await rejectionOf(world.anthropic.messages.countTokens({ model: MODELS.anthropic, messages: MESSAGES }));
    expect(anthropicError).toBeInstanceOf(Anthropic.InternalServerError);
    expect(anthropicError.status).toBe(502);
    world.upstreams.gemini.setBehavior({ script: () => Response.json(geminiInvalidKeyBody(), { status: 400 }) });
    const geminiError = await rejectionOf(world.genai.models.countTokens({ model: MODELS.gemini, contents: "Count me" }));
    expect(geminiError.status).toBe(502);
  });

  test.each([[503], [429]])("an upstream %d fails over to the model's next channel", async (status) => {
    const model = `count-failover-${status}`;
    failing.setBehavior({ status });
    await createChannel(world.gw, { name: `${model} first`, type: "anthropic", base_url: failing.url, api_key: "k", models: [model], priority: 10 });
    const second = await createChannel(world.gw, {
      name: `${model} second`,
      type: "gemini",
      base_url: world.upstreams.gemini.url,
      api_key: "gemini-upstream-key",
      models: [model],
      model_map: { [model]: UPSTREAM_MODELS.gemini },
    });
    const { data, response } = await world.anthropic.messages.countTokens({ model, messages: MESSAGES }).withResponse();
    expect(data.input_tokens).toBe(GEMINI_COUNT);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(response.headers.get("x-gateway-channel")).toBe(second);
    expect(failing.requests.map((r) => r.path)).toEqual(["/v1/messages/count_tokens"]);
    expect(world.upstreams.gemini.requests.map((r) => r.action)).toEqual(["countTokens"]);
  });
});

describe("admission", () => {
  test("each count is one request against the key's requests per minute, which chat shares: the third is a 429", async () => {
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 }, { requests_per_minute: 2 });
    const anthropic = anthropicClient(world.gw, key);
    const first = await anthropic.messages.countTokens({ model: MODELS.mock, messages: MESSAGES }).withResponse();
    expect(first.response.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const second = await genaiClient(world.gw, key).models.countTokens({ model: MODELS.mock, contents: "Count me" });
    expect(second.sdkHttpResponse?.headers?.["x-ratelimit-remaining-requests"]).toBe("0");
    const limited = await rejectionOf(anthropic.messages.countTokens({ model: MODELS.mock, messages: MESSAGES }));
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("2");
    const chat = await rejectionOf(anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES }));
    expect(chat).toBeInstanceOf(Anthropic.RateLimitError);
  });

  test("a count reserves no tokens, so it is admitted while the tokens per minute are spent", async () => {
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 }, { requests_per_minute: 100, tokens_per_minute: 1000 });
    // The upstream counts far more than the reservation: the bucket ends up owing tokens.
    const completion = jsonFixture("openai-chat-completion.json");
    world.upstreams.openai.setBehavior({ completion: { ...completion, usage: { prompt_tokens: 5000, completion_tokens: 1, total_tokens: 5001 } } });
    const anthropic = anthropicClient(world.gw, key);
    await anthropic.messages.create({ model: MODELS.openai, max_tokens: 10, messages: MESSAGES });
    const chat = await rejectionOf(anthropic.messages.create({ model: MODELS.mock, max_tokens: 10, messages: MESSAGES }));
    expect(chat).toBeInstanceOf(Anthropic.RateLimitError);
    const { data, response } = await anthropic.messages.countTokens({ model: MODELS.mock, messages: MESSAGES }).withResponse();
    expect(data.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
  });

  test("counting writes no usage row and no ledger row, holds nothing, and needs no balance", async () => {
    for (const balance of [5, 0]) {
      const { userId, key } = await createUserKey(world.gw, { plan: "enterprise", balance });
      const anthropic = anthropicClient(world.gw, key);
      for (const model of [MODELS.anthropic, MODELS.gemini, MODELS.openai, MODELS.mock]) {
        expect((await anthropic.messages.countTokens({ model, messages: MESSAGES })).input_tokens).toBeGreaterThan(0);
      }
      expect((await genaiClient(world.gw, key).models.countTokens({ model: MODELS.gemini, contents: "Count me" })).totalTokens).toBe(GEMINI_COUNT);
      await world.gw.services.usage.flush();
      const db = world.gw.database.db;
      expect(await db.selectFrom("usage_logs").select("id").where("user_id", "=", userId).execute()).toEqual([]);
      expect(await db.selectFrom("holds").select("id").where("user_id", "=", userId).execute()).toEqual([]);
      const ledger = await db.selectFrom("ledger").select("kind").where("user_id", "=", userId).execute();
      expect(ledger.map((row) => row.kind)).toEqual(balance > 0 ? ["topup"] : []);
      const user = await db.selectFrom("users").select(["balance_micros", "total_spent_micros"]).where("id", "=", userId).executeTakeFirstOrThrow();
      expect(user).toEqual({ balance_micros: balance * 1_000_000, total_spent_micros: 0 });
    }
  });

  test("a model without a price can be counted, while chat on it is refused", async () => {
    expect((await world.gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: false })).status).toBe(200);
    try {
      expect((await world.anthropic.messages.countTokens({ model: MODELS.anthropic, messages: MESSAGES })).input_tokens).toBeGreaterThan(0);
      const chat = await rejectionOf(world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 20, messages: MESSAGES }));
      expect(chat).toBeInstanceOf(Anthropic.BadRequestError);
    } finally {
      await world.gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: true });
    }
  });

  test("the model must be one the key may chat with: 404 unknown or outside the key's models, 400 for an embedding model", async () => {
    expect(await rejectionOf(world.anthropic.messages.countTokens({ model: "no-such-model", messages: MESSAGES }))).toBeInstanceOf(Anthropic.NotFoundError);
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 1 }, { models: [MODELS.mock] });
    const limited = await rejectionOf(anthropicClient(world.gw, key).messages.countTokens({ model: MODELS.anthropic, messages: MESSAGES }));
    expect(limited).toBeInstanceOf(Anthropic.NotFoundError);
    const embedding = await rejectionOf(world.genai.models.countTokens({ model: "demo-embed", contents: "Count me" }));
    expect(embedding.status).toBe(400);
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
  });
});

describe("bad bodies are 400 naming the field, and reach no upstream", () => {
  const cases: [string, string, string, string][] = [
    ["anthropic: no messages", "/v1/messages/count_tokens", JSON.stringify({ model: MODELS.anthropic }), "'messages' is required"],
    ["anthropic: empty messages", "/v1/messages/count_tokens", JSON.stringify({ model: MODELS.anthropic, messages: [] }), "messages"],
    ["anthropic: a bad role", "/v1/messages/count_tokens", JSON.stringify({ model: MODELS.anthropic, messages: [{ role: "robot", content: "x" }] }), "messages[0].role"],
    ["anthropic: no model", "/v1/messages/count_tokens", JSON.stringify({ messages: MESSAGES }), "'model' is required"],
    ["anthropic: not JSON", "/v1/messages/count_tokens", "{", "not valid JSON"],
    ["gemini: neither contents nor generateContentRequest", `/v1beta/models/${MODELS.gemini}:countTokens`, "{}", "'contents' or 'generateContentRequest' is required"],
    ["gemini: empty contents", `/v1beta/models/${MODELS.gemini}:countTokens`, JSON.stringify({ contents: [] }), "contents"],
    [
      "gemini: a system instruction beside contents",
      `/v1beta/models/${MODELS.gemini}:countTokens`,
      JSON.stringify({ contents: [{ parts: [{ text: "x" }] }], systemInstruction: { parts: [{ text: "y" }] } }),
      "'systemInstruction'",
    ],
    [
      "gemini: a generateContentRequest without contents",
      `/v1beta/models/${MODELS.gemini}:countTokens`,
      JSON.stringify({ generateContentRequest: { model: "models/x" } }),
      "'generateContentRequest.contents' is required",
    ],
  ];
  test.each(cases)("%s", async (_label, path, body, named) => {
    const answer = await post(path, body);
    expect(answer.status).toBe(400);
    // Gemini's own paths add Google's status name, as Gemini writes its errors.
    const status = path.startsWith("/v1beta/") ? { status: "INVALID_ARGUMENT" } : {};
    expect(answer.body.error).toEqual({ message: expect.stringContaining(named), type: "invalid_request_error", code: 400, ...status });
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
    expect(world.upstreams.gemini.requests).toHaveLength(0);
  });
});
