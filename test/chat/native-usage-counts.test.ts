import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { GEMINI_PLAIN_FIXTURE, startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";

/**
 * A response relayed from an upstream of the caller's own format holds every count of its
 * usage that spec 2.2 and 2.4 list, also when the upstream left one out: Gemini leaves out a
 * count of 0 (no candidatesTokenCount when the answer was all thinking), and an
 * OpenAI-compatible server may send no total_tokens. The counts it did send are kept as sent.
 */

let gw: TestGateway;
let openai: OpenAiUpstream;
let gemini: GeminiUpstream;

beforeAll(async () => {
  [gw, openai, gemini] = await Promise.all([startTestGateway(), startOpenAiUpstream(), startGeminiUpstream()]);
  for (const [type, upstream] of [["openai", openai], ["gemini", gemini]] as const) {
    const created = await gw.admin("POST", "/v1/admin/channels", { name: type, type, base_url: upstream.url, api_key: `${type}-key`, models: [`${type}-model`] });
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await gw.close();
  await Promise.all([openai.close(), gemini.close()]);
});

async function post(path: string, body: unknown): Promise<any> {
  const response = await gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return response.json();
}

test("generateContent: a usageMetadata without candidatesTokenCount (an answer cut off while thinking) shows it as 0", async () => {
  const usageMetadata = { promptTokenCount: 8, thoughtsTokenCount: 20, totalTokenCount: 28 };
  const plain = jsonFixture(GEMINI_PLAIN_FIXTURE);
  gemini.setBehavior({ response: { ...plain, candidates: [{ ...plain.candidates[0], finishReason: "MAX_TOKENS" }], usageMetadata } });
  const body = await post("/v1beta/models/gemini-model:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  expect(body.usageMetadata).toEqual({ ...usageMetadata, candidatesTokenCount: 0 });
});

test("chat completions: a usage without total_tokens shows the sum of the other two", async () => {
  const plain = jsonFixture("openai-chat-completion.json");
  const usage = { prompt_tokens: 5, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } };
  openai.setBehavior({ completion: { ...plain, usage } });
  const body = await post("/v1/chat/completions", { model: "openai-model", messages: [{ role: "user", content: "hi" }] });
  expect(body.usage).toEqual({ ...usage, total_tokens: 12 });
});

test("a whole usage is relayed as the upstream sent it", async () => {
  const plain = jsonFixture("openai-chat-completion.json");
  openai.setBehavior({ completion: plain });
  const body = await post("/v1/chat/completions", { model: "openai-model", messages: [{ role: "user", content: "hi" }] });
  expect(body.usage).toEqual(plain.usage);
});
