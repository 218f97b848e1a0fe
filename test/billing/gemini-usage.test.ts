import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { GEMINI_PLAIN_FIXTURE, startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { account, chat, expectBooksBalanced, newAccount, usageRows } from "./_inprocess.ts";
import { costOf, estimate, PRICE_BODY } from "./_support.ts";

/**
 * What a Gemini upstream reports as usageMetadata decides the charge. Gemini leaves out a
 * count of 0 (an answer with no output has no candidatesTokenCount), but every answer counts
 * its prompt: a usageMetadata without promptTokenCount is not believed, and the estimate is
 * charged instead of a free prompt.
 */

const MODEL = "gemini-usage-model";
const PROMPT = "How are you doing today, Gemini loopback upstream?";
const START = 1_000_000;
const PLAIN = jsonFixture(GEMINI_PLAIN_FIXTURE);
const ANSWER: string = PLAIN.candidates[0].content.parts[0].text;

let gw: TestGateway;
let upstream: GeminiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  upstream = await startGeminiUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: MODEL, type: "gemini", base_url: upstream.url, api_key: "gemini-key", models: [MODEL] })).status).toBe(201);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
});

afterAll(async () => {
  await gw.close();
  await upstream.close();
});

async function chargedFor(usageMetadata: unknown): Promise<{ prompt_tokens: number; completion_tokens: number; cost_micros: number }> {
  upstream.setBehavior({ response: { ...PLAIN, usageMetadata } });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, { model: MODEL, max_tokens: 100, messages: [{ role: "user", content: PROMPT }] });
  const body = await response.text();
  expect({ status: response.status, body }).toMatchObject({ status: 200 });
  const [row] = await usageRows(gw, id);
  expect(await account(gw, id)).toEqual({ balance_micros: START - row!.cost_micros, total_spent_micros: row!.cost_micros });
  await expectBooksBalanced(gw);
  return row!;
}

test("usageMetadata without promptTokenCount: not believed, the estimate is charged", async () => {
  for (const usage of [{}, { candidatesTokenCount: 15, totalTokenCount: 15 }]) {
    expect(await chargedFor(usage)).toMatchObject({
      prompt_tokens: estimate(PROMPT),
      completion_tokens: estimate(ANSWER),
      cost_micros: costOf(estimate(PROMPT), estimate(ANSWER)),
    });
  }
});

test("usageMetadata without candidatesTokenCount: the prompt is charged, the answer counts 0 as Gemini means", async () => {
  expect(await chargedFor({ promptTokenCount: 8, totalTokenCount: 8 })).toMatchObject({ prompt_tokens: 8, completion_tokens: 0, cost_micros: costOf(8, 0) });
});

test("whole usageMetadata: charged as reported", async () => {
  expect(await chargedFor(PLAIN.usageMetadata)).toMatchObject({ prompt_tokens: 8, completion_tokens: 15, cost_micros: costOf(8, 15) });
});

test("toolUsePromptTokenCount, the prompt of Gemini's own tools, which promptTokenCount leaves out: charged as input", async () => {
  const usage = { promptTokenCount: 100, toolUsePromptTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 170 };
  expect(await chargedFor(usage)).toMatchObject({ prompt_tokens: 140, completion_tokens: 30, cost_micros: costOf(140, 30) });
});

test("streamed: the last chunk's toolUsePromptTokenCount is charged as input", async () => {
  const usage = { promptTokenCount: 100, toolUsePromptTokenCount: 40, candidatesTokenCount: 20, totalTokenCount: 160 };
  const chunk = (text: string, last: boolean) =>
    `data: ${JSON.stringify({
      candidates: [{ content: { parts: [{ text }], role: "model" }, ...(last ? { finishReason: "STOP" } : {}) }],
      usageMetadata: last ? usage : { promptTokenCount: 100, totalTokenCount: 100 },
    })}\r\n\r\n`;
  upstream.setBehavior({ script: () => new Response(chunk("It is", false) + chunk(" sunny.", true), { headers: { "content-type": "text/event-stream" } }) });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: PROMPT }] });
  expect(await response.text()).toContain("[DONE]");
  const [row] = await usageRows(gw, id);
  expect(row).toMatchObject({ prompt_tokens: 140, completion_tokens: 20, cost_micros: costOf(140, 20) });
  await expectBooksBalanced(gw);
});
