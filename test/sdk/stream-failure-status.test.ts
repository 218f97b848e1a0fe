import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { responseHead, startRawUpstream, type RawExchange, type RawUpstream } from "../helpers/raw-upstream.ts";
import { expectBooksBalanced, newAccount, usageRows } from "../billing/_inprocess.ts";

/**
 * A failure after a stream began says what it was, in each caller format's error event and
 * in the usage row: an upstream gone silent past the idle limit is a timeout (504), one that
 * says mid-answer that it is overloaded is a 503, as the same failures before the headers
 * are. Before, every such event and row said 502, a broken upstream.
 */

const IDLE_MS = 300;
const SSE_HEAD = responseHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });

/** An OpenAI stream that sends two pieces of text, then nothing, with the connection left open. */
function openAiThenSilence(exchange: RawExchange): void {
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  exchange.write(SSE_HEAD + chunk("Hello") + chunk(" there"));
}

/** An Anthropic stream that sends one piece of text, then Anthropic's overloaded error event. */
function anthropicThenOverloaded(exchange: RawExchange): void {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  exchange.write(
    SSE_HEAD +
      event("message_start", {
        message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } },
      }) +
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hello" } }) +
      event("error", { error: { type: "overloaded_error", message: "Overloaded" } }),
  );
  exchange.end();
}

let gw: TestGateway;
let key: string;
let userId: string;
const raws: RawUpstream[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ env: { GATEWAY_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS) } });
  ({ id: userId, key } = await newAccount(gw, 10_000_000));
  const silent = await startRawUpstream(openAiThenSilence);
  const overloaded = await startRawUpstream(anthropicThenOverloaded);
  raws.push(silent, overloaded);
  const channel = (name: string, type: string, base_url: string, model: string) => gw.admin("POST", "/v1/admin/channels", { name, type, base_url, api_key: "k", models: [model] });
  expect((await channel("silent", "openai", `${silent.url}/v1`, "goes-silent")).status).toBe(201);
  expect((await channel("overloaded", "anthropic", overloaded.url, "gets-overloaded")).status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await Promise.all(raws.map((raw) => raw.close()));
});

/** Streams `model` through each SDK; the text that arrived and the error its stream raised. */
const CALLERS = {
  async openai(model: string) {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    let text = "";
    try {
      const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    } catch (error) {
      return { text, error: error as InstanceType<typeof OpenAI.APIError> };
    }
    throw new Error("the stream ended without an error");
  },
  async anthropic(model: string) {
    const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    let text = "";
    try {
      const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: "user", content: "Hi" }] });
      stream.on("text", (delta) => (text += delta));
      await stream.finalMessage();
    } catch (error) {
      return { text, error: error as InstanceType<typeof Anthropic.APIError> };
    }
    throw new Error("the stream ended without an error");
  },
  async genai(model: string) {
    const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
    let text = "";
    try {
      for await (const chunk of await client.models.generateContentStream({ model, contents: "Hi" })) text += chunk.text ?? "";
    } catch (error) {
      return { text, error: error as ApiError };
    }
    throw new Error("the stream ended without an error");
  },
};

/** The status, and each format's name for it, that a caller's error event should carry. */
const CASES = [
  { model: "goes-silent", text: "Hello there", status: 504, openai: "upstream_timeout", anthropic: "timeout_error", google: "DEADLINE_EXCEEDED" },
  { model: "gets-overloaded", text: "Hello", status: 503, openai: "unavailable", anthropic: "overloaded_error", google: "UNAVAILABLE" },
] as const;

describe.each(CASES.map((c) => [c.model, c]))("%s", (_name, expected) => {
  test("the openai SDK raises an APIError of that type and code after the text", async () => {
    const { text, error } = await CALLERS.openai(expected.model);
    expect(text).toBe(expected.text);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect({ type: error.type, code: error.code as unknown }).toEqual({ type: expected.openai, code: expected.status });
  });

  test("the anthropic SDK raises an APIError carrying Anthropic's type for it", async () => {
    const { text, error } = await CALLERS.anthropic(expected.model);
    expect(text).toBe(expected.text);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error.error as { error?: { type?: string } }).error?.type).toBe(expected.anthropic);
  });

  test("the genai SDK raises an ApiError with that status and Google's name for it", async () => {
    const { text, error } = await CALLERS.genai(expected.model);
    expect(text).toBe(expected.text);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(expected.status);
    expect(error.message).toStartWith(`got status: ${expected.google}.`);
  });
});

test("each failed stream's usage row has the status of its error event, and the books balance", async () => {
  await gw.services.usage.flush();
  const rows = await usageRows(gw, userId, CASES.length * 3);
  const statusByModel = Object.fromEntries(CASES.map((c) => [c.model, [...new Set(rows.filter((row) => row.model === c.model).map((row) => row.status))]]));
  expect(statusByModel).toEqual({ "goes-silent": [504], "gets-overloaded": [503] });
  await expectBooksBalanced(gw);
});
