import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { ANTHROPIC_STREAM_FIXTURE, editedAnthropicStream, startAnthropicUpstream, summarizeAnthropicStream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { account, chat, expectBooksBalanced, newAccount, usageRows } from "./_inprocess.ts";
import { costOf, estimate, PRICE_BODY } from "./_support.ts";

/**
 * An Anthropic stream reports its usage in two halves: input in message_start, output in
 * message_delta. A half missing or not believable (README "Usage rows") is not read as 0,
 * which made the prompt or the answer free: without the input half both are estimated, as
 * for any other upstream; without the output half the prompt is charged as message_start
 * counted it, as for a stream that ends before its usage, and the streamed text estimated.
 */

const MODEL = "anthropic-usage-model";
const PROMPT = "How are you doing today, Anthropic loopback upstream?";
const STREAM = summarizeAnthropicStream(ANTHROPIC_STREAM_FIXTURE);
const START = 1_000_000;

let gw: TestGateway;
let upstream: AnthropicUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  upstream = await startAnthropicUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "anthropic", type: "anthropic", base_url: upstream.url, api_key: "sk-ant-loopback", models: [MODEL] })).status).toBe(201);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
});

afterAll(async () => {
  await gw.close();
  await upstream.close();
});

/** Streams MODEL's answer to a new account; returns the account's one usage row and its spending. */
async function charged(edit: (data: any) => void) {
  upstream.setBehavior({ script: () => editedAnthropicStream(edit) });
  const { id, key } = await newAccount(gw, START);
  const response = await chat(gw, key, { model: MODEL, stream: true, max_tokens: 100, messages: [{ role: "user", content: PROMPT }] });
  expect(response.status).toBe(200);
  await response.text();
  const [row] = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  return { row, spent: (await account(gw, id)).total_spent_micros };
}

test("both halves reported: charged exactly per them", async () => {
  const { row, spent } = await charged(() => {});
  expect(row).toMatchObject({ status: 200, prompt_tokens: STREAM.usage.input_tokens, completion_tokens: STREAM.usage.output_tokens });
  expect(spent).toBe(costOf(STREAM.usage.input_tokens, STREAM.usage.output_tokens));
});

test.each([
  ["message_start's usage is negative", (data: any) => data.type === "message_start" && (data.message.usage = { input_tokens: -5, output_tokens: 1 })],
  ["message_start has no usage", (data: any) => data.type === "message_start" && delete data.message.usage],
])("%s: the estimate of the prompt and the streamed text is charged", async (_, edit) => {
  const { row, spent } = await charged(edit);
  expect(row).toMatchObject({ status: 200, prompt_tokens: estimate(PROMPT), completion_tokens: estimate(STREAM.text) });
  expect(spent).toBe(costOf(estimate(PROMPT), estimate(STREAM.text)));
});

test.each([
  ["message_delta's usage is huge", (data: any) => data.type === "message_delta" && (data.usage = { output_tokens: 1e300 })],
  ["message_delta has no usage", (data: any) => data.type === "message_delta" && delete data.usage],
])("%s: the prompt as message_start counted it and the estimate of the streamed text are charged", async (_, edit) => {
  const { row, spent } = await charged(edit);
  expect(row).toMatchObject({ status: 200, prompt_tokens: STREAM.usage.input_tokens, completion_tokens: estimate(STREAM.text) });
  expect(spent).toBe(costOf(STREAM.usage.input_tokens, estimate(STREAM.text)));
});
