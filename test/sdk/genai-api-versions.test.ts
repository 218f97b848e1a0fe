import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError, GoogleGenAI } from "@google/genai";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { rejectionOf } from "./_support.ts";

/**
 * The @google/genai SDK with another `apiVersion` than its default v1beta: "v1", Gemini's
 * stable API, and "v1alpha", where Google previews features first. The SDK calls the same
 * actions under /{version}/models/{model}:{action}; each is served as under /v1beta, on the
 * demo mock channel.
 */

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const post = (path: string) => fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${gw.demoKey}`, "content-type": "application/json" }, body: "{}" });

describe.each(["v1", "v1alpha"])("apiVersion %s", (apiVersion) => {
  const genai = () => new GoogleGenAI({ apiKey: gw.demoKey, httpOptions: { baseUrl: gw.url, apiVersion, timeout: 10_000 } });

  test("generateContent, its stream, countTokens and embedContent are served", async () => {
    const answer = await genai().models.generateContent({ model: "demo-chat", contents: "Hello there" });
    expect(answer.text?.length).toBeGreaterThan(0);
    expect(answer.usageMetadata?.promptTokenCount).toBeGreaterThan(0);

    let streamed = "";
    for await (const chunk of await genai().models.generateContentStream({ model: "demo-chat", contents: "Hello there" })) streamed += chunk.text ?? "";
    expect(streamed).toBe(answer.text!);

    const counted = await genai().models.countTokens({ model: "demo-chat", contents: "Hello there" });
    expect(counted.totalTokens).toBe(answer.usageMetadata!.promptTokenCount!);

    const embedded = await genai().models.embedContent({ model: "demo-embed", contents: "Hello there", config: { outputDimensionality: 8 } });
    expect(embedded.embeddings?.[0]?.values).toHaveLength(8);
  });

  test("an unknown model is the SDK's ApiError 404 with Google's status, as under /v1beta", async () => {
    const error = await rejectionOf(genai().models.generateContent({ model: "no-such-model", contents: "Hello" }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(404);
    expect(JSON.parse(error.message).error).toMatchObject({ code: 404, status: "NOT_FOUND", type: "not_found_error" });
  });

  test("an unknown action and a POST to the model itself are 404s in Gemini's error shape", async () => {
    const unknownAction = await post(`/${apiVersion}/models/demo-chat:fly`);
    expect(unknownAction.status).toBe(404);
    expect((await unknownAction.json()).error).toMatchObject({ code: 404, status: "NOT_FOUND" });
    const bare = await post(`/${apiVersion}/models/demo-chat`);
    expect(bare.status).toBe(404);
  });

  test("models.list and models.get answer in Gemini's shape", async () => {
    const names: string[] = [];
    for await (const model of await genai().models.list()) names.push(model.name!);
    expect(names).toContain("models/demo-chat");
    const one = await genai().models.get({ model: "demo-chat" });
    expect(one.name).toBe("models/demo-chat");
    expect(one.supportedActions).toContain("generateContent");
  });
});

test("the OpenAI-format GET /v1/models is unchanged beside genai's v1 list, told apart by the SDK's x-goog-api-key", async () => {
  const listed = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.demoKey}` } });
  expect(listed.status).toBe(200);
  expect((await listed.json()).object).toBe("list");
});

test("a model list under /v1alpha is Gemini's whatever the caller's key header", async () => {
  const listed = await fetch(`${gw.url}/v1alpha/models`, { headers: { authorization: `Bearer ${gw.demoKey}` } });
  expect(listed.status).toBe(200);
  expect((await listed.json()).models).toContainEqual(expect.objectContaining({ name: "models/demo-chat" }));
});
