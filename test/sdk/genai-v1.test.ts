import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiError, GoogleGenAI } from "@google/genai";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { rejectionOf } from "./_support.ts";

/**
 * The @google/genai SDK with `apiVersion: "v1"`, Gemini's stable API, which it calls under
 * /v1/models/{model}:{action} instead of /v1beta: the same actions, on the demo mock channel.
 */

let gw: TestGateway;
let genai: GoogleGenAI;

beforeAll(async () => {
  gw = await startTestGateway();
  genai = new GoogleGenAI({ apiKey: gw.demoKey, httpOptions: { baseUrl: gw.url, apiVersion: "v1", timeout: 10_000 } });
});
afterAll(() => gw.close());

test("generateContent, its stream, countTokens and embedContent are served under /v1", async () => {
  const answer = await genai.models.generateContent({ model: "demo-chat", contents: "Hello there" });
  expect(answer.text?.length).toBeGreaterThan(0);
  expect(answer.usageMetadata?.promptTokenCount).toBeGreaterThan(0);

  let streamed = "";
  for await (const chunk of await genai.models.generateContentStream({ model: "demo-chat", contents: "Hello there" })) streamed += chunk.text ?? "";
  expect(streamed).toBe(answer.text!);

  const counted = await genai.models.countTokens({ model: "demo-chat", contents: "Hello there" });
  expect(counted.totalTokens).toBe(answer.usageMetadata!.promptTokenCount!);

  const embedded = await genai.models.embedContent({ model: "demo-embed", contents: "Hello there", config: { outputDimensionality: 8 } });
  expect(embedded.embeddings?.[0]?.values).toHaveLength(8);
});

test("an unknown model under /v1 is the SDK's ApiError 404 with Google's status, as under /v1beta", async () => {
  const error = await rejectionOf(genai.models.generateContent({ model: "no-such-model", contents: "Hello" }));
  expect(error).toBeInstanceOf(ApiError);
  expect(error.status).toBe(404);
  expect(JSON.parse(error.message).error).toMatchObject({ code: 404, status: "NOT_FOUND", type: "not_found_error" });
});

test("an unknown action and a POST to /v1/models itself are 404s; the OpenAI-format GET /v1/models is unchanged", async () => {
  const post = (path: string) => fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${gw.demoKey}`, "content-type": "application/json" }, body: "{}" });
  const unknownAction = await post("/v1/models/demo-chat:fly");
  expect(unknownAction.status).toBe(404);
  expect((await unknownAction.json()).error).toMatchObject({ code: 404, status: "NOT_FOUND" });
  const bare = await post("/v1/models/demo-chat");
  expect(bare.status).toBe(404);
  const listed = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.demoKey}` } });
  expect(listed.status).toBe(200);
  expect((await listed.json()).object).toBe("list");
});

test("models.list and models.get under /v1 answer in Gemini's shape, told apart by the SDK's x-goog-api-key", async () => {
  const names: string[] = [];
  for await (const model of await genai.models.list()) names.push(model.name!);
  expect(names).toContain("models/demo-chat");
  const one = await genai.models.get({ model: "demo-chat" });
  expect(one.name).toBe("models/demo-chat");
  expect(one.supportedActions).toContain("generateContent");
});
