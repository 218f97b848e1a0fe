import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { fixtureEvents } from "../helpers/openai-upstream.ts";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";
import { createChannel, createUserKey, MODELS, openAiClient, rejectionOf, startWorld, type World } from "./_support.ts";

/**
 * The Responses API's refusals and failures through the openai SDK: what the canonical form
 * cannot carry is a 400 naming it (sent nowhere), the gateway's 401, 402, 404 and 429 are the
 * SDK's own error classes, what no upstream receives is named in x-gateway-warnings, and an
 * upstream that fails mid-stream ends the stream with the format's error events.
 */

let world: World;
let limitedUpstream: OpenAiUpstream;
beforeAll(async () => {
  world = await startWorld();
  limitedUpstream = await startOpenAiUpstream({ status: 429, headers: { "retry-after": "7" } });
});
afterAll(async () => {
  await world.close();
  await limitedUpstream.close();
});
beforeEach(() => world.reset());

const base = { model: MODELS.openai, input: "Hello" };

describe("400 naming what is refused, before any upstream is called", () => {
  const CASES: [string, Record<string, unknown>, string][] = [
    ["a response to continue that is not kept", { previous_response_id: "resp_123" }, "previous_response_id"],
    ["a stored conversation", { conversation: "conv_123" }, "conversation"],
    ["a stored prompt template", { prompt: { id: "pmpt_123" } }, "prompt"],
    ["background mode", { background: true }, "background"],
    ["a built-in tool", { tools: [{ type: "code_interpreter", container: { type: "auto" } }] }, "code_interpreter"],
    ["web search forced by tool_choice", { tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, "tool_choice"],
    ["file search", { tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }, "file_search"],
    ["an input_file part", { input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] }, "input_file"],
    ["an image by file id", { input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1", detail: "auto" }] }] }, "file_id"],
    ["an item of another type", { input: [{ type: "web_search_call", id: "ws_1", status: "completed" }] }, "web_search_call"],
    ["a reference to an item the gateway never gave", { input: [{ type: "item_reference", id: "msg_1" }] }, "item_reference"],
    ["a temperature out of range", { temperature: 5 }, "temperature"],
    ["no input", { input: undefined }, "input"],
  ];

  test.each(CASES)("%s", async (_, fields, named) => {
    const error = await rejectionOf(world.openai.responses.create({ ...base, ...fields } as any));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain(named);
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });
});

describe("the SDK's error classes", () => {
  test("401: an unknown API key", async () => {
    const error = await rejectionOf(openAiClient(world.gw, "sk-gw-" + "x".repeat(40)).responses.create(base));
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  test("402: a zero balance, streamed too, refused before the stream starts", async () => {
    const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 0 });
    const client = openAiClient(world.gw, key);
    for (const stream of [false, true]) {
      const error = await rejectionOf(client.responses.create({ ...base, model: MODELS.mock, stream }));
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 402, type: "insufficient_funds" });
    }
  });

  test("404: an unknown model", async () => {
    const error = await rejectionOf(world.openai.responses.create({ ...base, model: "no-such-model" }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("429: the gateway's rate limit, and an upstream's", async () => {
    const patched = await world.gw.admin("PATCH", "/v1/admin/settings", { plans: { "sdk-responses-limited": { requests_per_minute: 1, tokens_per_minute: 1_000_000 } } });
    expect(patched.status).toBe(200);
    const { key } = await createUserKey(world.gw, { plan: "sdk-responses-limited", balance: 100 }, { requests_per_minute: 1 });
    const client = openAiClient(world.gw, key);
    await client.responses.create({ ...base, model: MODELS.mock });
    const limited = await rejectionOf(client.responses.create({ ...base, model: MODELS.mock }));
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.type).toBe("rate_limit_error");

    await createChannel(world.gw, { name: "responses 429", type: "openai", base_url: limitedUpstream.url, api_key: "k", models: ["sdk-responses-429"] });
    expect(await rejectionOf(world.openai.responses.create({ ...base, model: "sdk-responses-429" }))).toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe("x-gateway-warnings", () => {
  const warningsOf = async (fields: Record<string, unknown>, model = MODELS.anthropic) =>
    (await world.openai.responses.create({ ...base, model, ...fields } as any).withResponse()).response.headers.get("x-gateway-warnings") ?? "";

  test("a request that does not say store: false is told, once, what is kept of its Response, which is less than OpenAI stores", async () => {
    const warnings = await warningsOf({});
    expect(warnings).toBe("store: the Response is kept an hour, not 30 days, for previous_response_id, item_reference and GET /v1/responses/{id}");
    expect(await warningsOf({ store: true })).toBe(warnings);
  });

  test("nothing when store is false and every setting is carried", async () => {
    expect(await warningsOf({ store: false, temperature: 0.2, top_p: 0.9, max_output_tokens: 50, truncation: "disabled", include: [] })).toBe("");
  });

  test("include, metadata, truncation auto, prompt_cache_key, an unknown field: named, on every upstream kind; reasoning is carried", async () => {
    for (const model of [MODELS.openai, MODELS.anthropic, MODELS.gemini, MODELS.mock]) {
      const warnings = await warningsOf(
        { store: false, reasoning: { effort: "low", summary: "auto" }, include: ["message.output_text.logprobs"], metadata: { team: "a" }, truncation: "auto", prompt_cache_key: "k", frobnicate: 1 },
        model,
      );
      for (const field of ["include", "metadata", "truncation", "prompt_cache_key", "frobnicate"]) expect(warnings).toContain(`${field}: not passed on`);
      // Carried to every upstream; the demo model alone says it does not think.
      expect(warnings.includes("reasoning")).toBe(model === MODELS.mock);
    }
    // Not sent on, either, to an openai upstream, which is sent a chat completion.
    const body = world.upstreams.openai.requests.at(-1)!.body;
    for (const field of ["reasoning", "include", "metadata", "truncation", "prompt_cache_key", "frobnicate", "store"]) expect(body).not.toHaveProperty(field);
  });

  test("web search, which Codex CLI offers on every request, is left out and named; the function tools beside it go on, on every upstream kind", async () => {
    const lookUp = { type: "function", name: "look_up", description: "Looks a word up", parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] } };
    for (const kind of ["openai", "anthropic", "gemini"] as const) {
      const warnings = await warningsOf({ store: false, tools: [{ type: "web_search", external_web_access: true }, lookUp] }, MODELS[kind]);
      expect(warnings).toBe("tools[0]: 'web_search' left out: the gateway does not run web search, and the model answered without it");
      const body = world.upstreams[kind].requests.at(-1)!.body;
      const names = kind === "gemini" ? body.tools.flatMap((t: any) => t.functionDeclarations.map((d: any) => d.name)) : body.tools.map((t: any) => t.function?.name ?? t.name);
      expect(names).toEqual(["look_up"]);
    }
  });

  test("web search as the only tool: the request goes without tools", async () => {
    for (const type of ["web_search_preview", "web_search_2025_08_26"]) {
      expect(await warningsOf({ store: false, tools: [{ type }] }, MODELS.openai)).toContain(`tools[0]: '${type}' left out`);
      expect(world.upstreams.openai.requests.at(-1)!.body).not.toHaveProperty("tools");
    }
  });

  test("the metadata is echoed in the Response all the same", async () => {
    const response = await world.openai.responses.create({ ...base, model: MODELS.mock, metadata: { team: "a" } });
    expect(response.metadata).toEqual({ team: "a" });
  });
});

describe("an upstream that fails after the stream began", () => {
  test("the text so far, then an error event and response.failed, the last; the usage row says 502", async () => {
    // Two events of text, then the connection drops.
    world.upstreams.openai.setBehavior({ cutAfterEvents: 3, streamEnd: "abort" });
    const { data: stream, response } = await world.openai.responses.create({ ...base, stream: true }).withResponse();
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    const whole = fixtureEvents("openai-chat-stream.sse").slice(0, 3).map((data) => JSON.parse(data).choices?.[0]?.delta?.content ?? "").join("");
    expect(text).toBe(whole);
    expect(text.length).toBeGreaterThan(0);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "response.failed"]);
    const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    expect(failed.response.status).toBe("failed");
    expect(failed.response.error?.message).toBeTruthy();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const [row] = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
    expect(row.status).toBe(502);
  });

  test("the stream helper rejects with the error event's message, as it does for OpenAI's own", async () => {
    world.upstreams.openai.setBehavior({ cutAfterEvents: 3, streamEnd: "abort" });
    const error = await rejectionOf(world.openai.responses.stream(base).finalResponse());
    expect(error.message).toContain("upstream stream ended before the response was complete");
  });
});
