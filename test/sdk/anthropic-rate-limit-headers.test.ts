import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { anthropicClient, createUserKey, genaiClient, MODELS, rejectionOf } from "./_support.ts";

/**
 * Anthropic answers every messages and count_tokens request, and its 429s, with its own
 * rate-limit headers: anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}, the reset
 * the RFC 3339 time the limit is all free again. A messages-format caller gets them from the
 * gateway with the values of its x-ratelimit-* headers, which it keeps; other formats keep
 * OpenAI's names alone.
 */

const START = Date.parse("2026-11-21T10:00:00Z");
let clock = START;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ now: () => clock });
});
afterAll(() => gw.close());
// A minute on, everything the last test used has aged out.
beforeEach(() => {
  clock += 60_000;
});

/** A key of its own limits: 2 requests a minute, 100,000 tokens. */
async function limitedClient(): Promise<{ key: string; anthropic: Anthropic }> {
  const { key } = await createUserKey(gw, { plan: "enterprise", balance: 10 }, { requests_per_minute: 2, tokens_per_minute: 100_000 });
  return { key, anthropic: anthropicClient(gw, key) };
}

const MESSAGES = [{ role: "user" as const, content: "Hello" }];
const ANTHROPIC_NAMES = /^anthropic-ratelimit-/;
const RFC_3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** The anthropic-ratelimit-* headers of a response. */
function anthropicHeadersOf(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => ANTHROPIC_NAMES.test(name)));
}

/** What the anthropic-ratelimit-* headers must say, from the x-ratelimit-* ones of the same response. */
function expectSameValues(headers: Headers) {
  const anthropic = anthropicHeadersOf(headers);
  expect(Object.keys(anthropic).sort()).toEqual(
    ["requests", "tokens"].flatMap((bucket) => ["limit", "remaining", "reset"].map((field) => `anthropic-ratelimit-${bucket}-${field}`)).sort(),
  );
  for (const bucket of ["requests", "tokens"]) {
    expect(anthropic[`anthropic-ratelimit-${bucket}-limit`]).toBe(headers.get(`x-ratelimit-limit-${bucket}`)!);
    expect(anthropic[`anthropic-ratelimit-${bucket}-remaining`]).toBe(headers.get(`x-ratelimit-remaining-${bucket}`)!);
    expect(anthropic[`anthropic-ratelimit-${bucket}-reset`]).toMatch(RFC_3339_UTC);
  }
  return anthropic;
}

test("messages.create: the requests and tokens trios beside the x- headers, reset at the time the limit is all free again", async () => {
  const { anthropic } = await limitedClient();
  const { response } = await anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES }).withResponse();
  const headers = expectSameValues(response.headers);
  expect(headers["anthropic-ratelimit-requests-limit"]).toBe("2");
  expect(headers["anthropic-ratelimit-requests-remaining"]).toBe("1");
  // The one request counts for a minute.
  expect(headers["anthropic-ratelimit-requests-reset"]).toBe(new Date(clock + 60_000).toISOString().replace(".000Z", "Z"));
  expect(headers["anthropic-ratelimit-tokens-limit"]).toBe("100000");
  expect(Date.parse(headers["anthropic-ratelimit-tokens-reset"]!)).toBeGreaterThan(clock);
});

test("a stream and count_tokens carry them too", async () => {
  const { anthropic } = await limitedClient();
  const { data: stream, response } = await anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES, stream: true }).withResponse();
  for await (const _ of stream);
  expect(expectSameValues(response.headers)["anthropic-ratelimit-requests-remaining"]).toBe("1");
  const counted = await anthropic.messages.countTokens({ model: MODELS.mock, messages: MESSAGES }).withResponse();
  expect(expectSameValues(counted.response.headers)["anthropic-ratelimit-requests-remaining"]).toBe("0");
});

test("the 429 carries them with retry-after: nothing remains, and the reset is when the limit is all free again", async () => {
  const { anthropic } = await limitedClient();
  await anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES });
  clock += 20_000;
  await anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES });
  clock += 20_000;
  const limited = await rejectionOf(anthropic.messages.create({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES }));
  expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
  // Until the first request is a minute old; the reset, until the second is.
  expect(Number(limited.headers.get("retry-after"))).toBe(20);
  const headers = expectSameValues(limited.headers);
  expect(headers["anthropic-ratelimit-requests-remaining"]).toBe("0");
  expect(headers["anthropic-ratelimit-requests-reset"]).toBe(new Date(clock + 40_000).toISOString().replace(".000Z", "Z"));
  const count = await rejectionOf(anthropic.messages.countTokens({ model: MODELS.mock, messages: MESSAGES }));
  expect(count).toBeInstanceOf(Anthropic.RateLimitError);
  expect(anthropicHeadersOf(count.headers)["anthropic-ratelimit-requests-remaining"]).toBe("0");
});

test("chat completions and Gemini callers keep OpenAI's names alone, on success and on their 429", async () => {
  const { key } = await limitedClient();
  const chat = () =>
    gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body: JSON.stringify({ model: MODELS.mock, max_tokens: 20, messages: MESSAGES }) });
  const ok = await chat();
  await ok.text();
  expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe("1");
  expect(anthropicHeadersOf(ok.headers)).toEqual({});
  const gemini = await genaiClient(gw, key).models.generateContent({ model: MODELS.mock, contents: "Hello" });
  expect(gemini.sdkHttpResponse?.headers?.["x-ratelimit-remaining-requests"]).toBe("0");
  expect(Object.keys(gemini.sdkHttpResponse?.headers ?? {}).filter((name) => ANTHROPIC_NAMES.test(name))).toEqual([]);
  const limited = await chat();
  await limited.text();
  expect(limited.status).toBe(429);
  expect(anthropicHeadersOf(limited.headers)).toEqual({});
});
