import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_COUNT_FIXTURE } from "../helpers/anthropic-upstream.ts";
import { GEMINI_COUNT_FIXTURE } from "../helpers/gemini-upstream.ts";
import { anthropicWeatherTool, genaiWeatherTool, MODELS, onlyRequest, startWorld, UPSTREAM_KEYS, UPSTREAM_MODELS, WEATHER, type World } from "./_support.ts";

/**
 * Token counting through the official SDKs, nothing changed but base URL and key:
 * Anthropic's `messages.countTokens` (POST /v1/messages/count_tokens) and genai's
 * `models.countTokens` (POST /v1beta/models/{model}:countTokens), on a channel of each kind.
 * An anthropic or gemini channel counts upstream (the loopback records what it was sent); an
 * openai channel cannot, so the gateway estimates (4 characters a token) and says so; the mock
 * counts as its usage does.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const ANTHROPIC_COUNT: number = jsonFixture(ANTHROPIC_COUNT_FIXTURE).input_tokens;
const GEMINI_COUNT: number = jsonFixture(GEMINI_COUNT_FIXTURE).totalTokens;

const SYSTEM = "You are terse.";
const PROMPT = "How many tokens is this?";
/** The documented estimate: the prompt's characters (system included) / 4, rounded up. */
const ESTIMATE = Math.ceil((SYSTEM + PROMPT).length / 4);

/** Anthropic's countTokens of the shared prompt, with the response for its headers. */
function anthropicCount(model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return world.anthropic.messages
    .countTokens({ model, system: SYSTEM, messages: [{ role: "user", content: PROMPT }], ...extra }, { headers })
    .withResponse();
}

describe("Anthropic SDK: client.messages.countTokens", () => {
  test("anthropic channel: the caller's body goes to count_tokens with the model mapped, unknown fields and anthropic-beta kept", async () => {
    const thinking = { type: "enabled" as const, budget_tokens: 2048 };
    const { data, response } = await anthropicCount(MODELS.anthropic, { tools: [anthropicWeatherTool], thinking }, { "anthropic-beta": "token-counting-2024-11-01" });
    expect(data).toEqual({ input_tokens: ANTHROPIC_COUNT });
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    expect(response.headers.get("x-gateway-channel")).toMatch(/.+/);
    expect(response.headers.get("request-id")).toMatch(/^req/);
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const received = onlyRequest(world, "anthropic");
    expect(received.path).toBe("/v1/messages/count_tokens");
    expect(received.headers["x-api-key"]).toBe(UPSTREAM_KEYS.anthropic);
    expect(received.headers["anthropic-version"]).toBe("2023-06-01");
    expect(received.headers["anthropic-beta"]).toBe("token-counting-2024-11-01");
    expect(received.body).toEqual({
      model: UPSTREAM_MODELS.anthropic,
      system: SYSTEM,
      messages: [{ role: "user", content: PROMPT }],
      tools: [anthropicWeatherTool],
      thinking,
    });
  });

  test("gemini channel: the prompt goes translated inside generateContentRequest, system instruction and tools included", async () => {
    const { data, response } = await anthropicCount(MODELS.gemini, { tools: [anthropicWeatherTool] });
    expect(data.input_tokens).toBe(GEMINI_COUNT);
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    const received = onlyRequest(world, "gemini");
    expect(received.path).toBe(`/v1beta/models/${UPSTREAM_MODELS.gemini}:countTokens`);
    expect(received.headers["x-goog-api-key"]).toBe(UPSTREAM_KEYS.gemini);
    const counted = received.body.generateContentRequest;
    expect(Object.keys(received.body)).toEqual(["generateContentRequest"]);
    expect(counted.model).toBe(`models/${UPSTREAM_MODELS.gemini}`);
    expect(counted.contents).toEqual([{ role: "user", parts: [{ text: PROMPT }] }]);
    expect(counted.systemInstruction).toEqual({ parts: [{ text: SYSTEM }] });
    expect(counted.tools[0].functionDeclarations[0].name).toBe(WEATHER.name);
  });

  test("openai channel: no upstream call, the gateway's estimate, and a warning that says so", async () => {
    const { data, response } = await anthropicCount(MODELS.openai);
    expect(data.input_tokens).toBe(ESTIMATE);
    expect(response.headers.get("x-gateway-warnings")).toContain("estimated by the gateway");
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("openai channel: the estimate counts the tool definitions and the images the upstream reads with the prompt", async () => {
    const { data: withTool } = await anthropicCount(MODELS.openai, { tools: [anthropicWeatherTool] });
    const toolText = WEATHER.name + WEATHER.description + JSON.stringify(WEATHER.parameters);
    expect(withTool.input_tokens).toBe(Math.ceil((SYSTEM + PROMPT + toolText).length / 4));

    const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const image = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: pixel } };
    const { data: withImage } = await world.anthropic.messages
      .countTokens({ model: MODELS.openai, system: SYSTEM, messages: [{ role: "user", content: [image, { type: "text", text: PROMPT }] }] })
      .withResponse();
    expect(withImage.input_tokens).toBe(ESTIMATE + 765);
  });

  test("mock channel: the count is the input_tokens the mock's usage reports for the same prompt", async () => {
    const { data, response } = await anthropicCount(MODELS.mock);
    const message = await world.anthropic.messages.create({ model: MODELS.mock, max_tokens: 50, system: SYSTEM, messages: [{ role: "user", content: PROMPT }] });
    expect(data.input_tokens).toBe(message.usage.input_tokens);
    expect(data.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
  });
});

describe("genai SDK: ai.models.countTokens", () => {
  test("gemini channel: the SDK's contents go to :countTokens of the mapped model", async () => {
    const result = await world.genai.models.countTokens({ model: MODELS.gemini, contents: PROMPT });
    expect(result.totalTokens).toBe(GEMINI_COUNT);
    expect(result.sdkHttpResponse?.headers?.["x-gateway-attempts"]).toBe("1");
    const received = onlyRequest(world, "gemini");
    expect(received.model).toBe(UPSTREAM_MODELS.gemini);
    expect(received.action).toBe("countTokens");
    expect(received.body.generateContentRequest).toEqual({
      contents: [{ role: "user", parts: [{ text: PROMPT }] }],
      generationConfig: {},
      model: `models/${UPSTREAM_MODELS.gemini}`,
    });
  });

  test("anthropic channel: the contents go translated to count_tokens, without max_tokens", async () => {
    const result = await world.genai.models.countTokens({ model: MODELS.anthropic, contents: PROMPT });
    expect(result.totalTokens).toBe(ANTHROPIC_COUNT);
    const received = onlyRequest(world, "anthropic");
    expect(received.path).toBe("/v1/messages/count_tokens");
    expect(received.body).toEqual({ model: UPSTREAM_MODELS.anthropic, messages: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] });
  });

  test("openai channel: the estimate, with the warning", async () => {
    const result = await world.genai.models.countTokens({ model: MODELS.openai, contents: PROMPT });
    expect(result.totalTokens).toBe(Math.ceil(PROMPT.length / 4));
    expect(result.sdkHttpResponse?.headers?.["x-gateway-warnings"]).toContain("estimated by the gateway");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("mock channel: the count is the promptTokenCount of the mock's usage", async () => {
    const result = await world.genai.models.countTokens({ model: MODELS.mock, contents: PROMPT });
    const generated = await world.genai.models.generateContent({ model: MODELS.mock, contents: PROMPT });
    expect(result.totalTokens).toBe(generated.usageMetadata!.promptTokenCount!);
  });
});

describe("OpenAI SDK: client.responses.inputTokens.count (POST /v1/responses/input_tokens)", () => {
  const count = (model: string, extra: Record<string, unknown> = {}) =>
    world.openai.responses.inputTokens.count({ model, instructions: SYSTEM, input: PROMPT, ...extra }).withResponse();

  test("anthropic channel: instructions as the system prompt and the input go to count_tokens; the count in OpenAI's shape", async () => {
    const before = (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.total;
    const { data, response } = await count(MODELS.anthropic);
    expect(data).toEqual({ object: "response.input_tokens", input_tokens: ANTHROPIC_COUNT });
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    // Counting stores nothing, so the store warning of /v1/responses does not apply.
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const received = onlyRequest(world, "anthropic");
    expect(received.path).toBe("/v1/messages/count_tokens");
    expect(received.body).toEqual({ model: UPSTREAM_MODELS.anthropic, system: SYSTEM, messages: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] });
    // Providers do not charge for counting: no usage row.
    expect((await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.total).toBe(before);
  });

  test("gemini channel: :countTokens of the mapped model, tools included", async () => {
    const tool = { type: "function" as const, name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters, strict: false };
    const { data } = await count(MODELS.gemini, { tools: [tool] });
    expect(data.input_tokens).toBe(GEMINI_COUNT);
    const received = onlyRequest(world, "gemini");
    expect(received.action).toBe("countTokens");
    expect(received.body.generateContentRequest.systemInstruction).toEqual({ parts: [{ text: SYSTEM }] });
    expect(received.body.generateContentRequest.tools[0].functionDeclarations[0].name).toBe(WEATHER.name);
  });

  test("openai channel: the gateway's estimate, with the warning, and no upstream call", async () => {
    const { data, response } = await count(MODELS.openai);
    expect(data.input_tokens).toBe(ESTIMATE);
    expect(response.headers.get("x-gateway-warnings")).toContain("estimated by the gateway");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("a stored response to continue is refused with 400, as on /v1/responses; no upstream is called", async () => {
    const error = await count(MODELS.anthropic, { previous_response_id: "resp_123" }).catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.message).toContain("previous_response_id");
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
  });
});

/** POSTs a countTokens body the way Gemini's REST docs show it (the SDK sends only `contents`), the key in `?key=`. */
function restCount(model: string, body: unknown): Promise<Response> {
  return world.gw.fetch(`/v1beta/models/${model}:countTokens?key=${world.key}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("a whole generateContentRequest (REST)", () => {
  const counted = {
    model: "models/whatever-the-caller-wrote",
    systemInstruction: { parts: [{ text: SYSTEM }] },
    contents: [{ role: "user", parts: [{ text: PROMPT }] }],
    tools: [genaiWeatherTool],
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }],
  };

  test("gemini channel: sent as the caller wrote it, fields the gateway does not model included, its model the upstream's", async () => {
    const response = await restCount(MODELS.gemini, { generateContentRequest: counted });
    expect(response.status).toBe(200);
    // Gemini's own answer, promptTokensDetails included.
    expect(await response.json()).toEqual(jsonFixture(GEMINI_COUNT_FIXTURE));
    const sent = onlyRequest(world, "gemini").body.generateContentRequest;
    expect(sent.model).toBe(`models/${UPSTREAM_MODELS.gemini}`);
    expect(sent.systemInstruction).toEqual(counted.systemInstruction);
    expect(sent.tools).toEqual(counted.tools);
    expect(sent.safetySettings).toEqual(counted.safetySettings);
  });

  test("anthropic channel: system and tools translated; what it cannot take is named in the warnings", async () => {
    const response = await restCount(MODELS.anthropic, { generateContentRequest: counted });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ totalTokens: ANTHROPIC_COUNT });
    expect(response.headers.get("x-gateway-warnings")).toContain("safetySettings");
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.system).toBe(SYSTEM);
    expect(sent.tools.map((t: any) => t.name)).toEqual([WEATHER.name]);
    expect("max_tokens" in sent).toBe(false);
  });
});

/**
 * What a counting upstream of the caller's own format says beside the count reaches the
 * caller as it was sent: Gemini's promptTokensDetails (tokens by modality) and
 * cachedContentTokenCount, Anthropic's context_management. The genai SDK's
 * CountTokensResponse keeps totalTokens and cachedContentTokenCount only, so the details are
 * read from the wire.
 */
describe("the upstream's own count body, for a caller of its format", () => {
  const geminiCount = {
    totalTokens: 1290,
    cachedContentTokenCount: 1032,
    promptTokensDetails: [
      { modality: "TEXT", tokenCount: 32 },
      { modality: "IMAGE", tokenCount: 1258 },
    ],
    cacheTokensDetails: [{ modality: "IMAGE", tokenCount: 1032 }],
  };
  const answering = (body: unknown) => ({ script: () => Response.json(body) });

  test("genai SDK, gemini channel: cachedContentTokenCount beside totalTokens", async () => {
    world.upstreams.gemini.setBehavior(answering(geminiCount));
    const result = await world.genai.models.countTokens({ model: MODELS.gemini, contents: PROMPT });
    expect(result.totalTokens).toBe(1290);
    expect(result.cachedContentTokenCount).toBe(1032);
  });

  test("gemini REST, gemini channel: the body as Gemini sent it, promptTokensDetails included", async () => {
    world.upstreams.gemini.setBehavior(answering(geminiCount));
    const response = await restCount(MODELS.gemini, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(geminiCount);
  });

  test("a gemini count of an unexpected shape is still a 502, not passed through", async () => {
    world.upstreams.gemini.setBehavior(answering({ totalTokens: "many", promptTokensDetails: [] }));
    const response = await restCount(MODELS.gemini, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
    expect(response.status).toBe(502);
  });

  test("a gemini caller on an anthropic channel gets the count in its own shape, nothing of Anthropic's", async () => {
    world.upstreams.anthropic.setBehavior(answering({ input_tokens: 14, context_management: { original_input_tokens: 20 } }));
    const response = await restCount(MODELS.anthropic, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
    expect(await response.json()).toEqual({ totalTokens: 14 });
  });

  test("anthropic SDK, anthropic channel: context_management beside input_tokens", async () => {
    world.upstreams.anthropic.setBehavior(answering({ input_tokens: 14, context_management: { original_input_tokens: 20 } }));
    const counted = await world.anthropic.beta.messages.countTokens({ model: MODELS.anthropic, messages: [{ role: "user", content: PROMPT }] });
    expect(counted.input_tokens).toBe(14);
    expect(counted.context_management).toEqual({ original_input_tokens: 20 });
  });
});
