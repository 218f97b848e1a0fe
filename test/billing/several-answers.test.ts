import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { account, expectBooksBalanced, ledgerOf, newAccount, usageRows } from "./_inprocess.ts";
import { bearer, costOf, estimate, PRICE_BODY } from "./_support.ts";
import {
  ANSWERS,
  fixtureChunks,
  GEMINI_SEVERAL_PLAIN,
  GEMINI_SEVERAL_STREAM,
  geminiAnswerTexts,
  geminiWithoutUsage,
  OPENAI_SEVERAL_PLAIN,
  OPENAI_SEVERAL_STREAM,
  openAiAnswerTexts,
  openAiChunksWithoutUsage,
  SEVERAL_TEXTS,
  sseOf,
} from "../helpers/several-answers.ts";

/**
 * Billing of a request for several answers (OpenAI's `n`, Gemini's `candidateCount`): the
 * hold covers max_tokens of output for every answer, and the request settles from the usage
 * the upstream reports, which covers them all; without that, the estimate counts the text of
 * every answer, not the first alone. A stream is whole only when every answer has finished:
 * one cut after the first answer finished is a broken stream, not a complete one.
 */

const PROMPT = "What is the capital of France? Answer in one sentence.";
const MAX_TOKENS = 100;
const START = 1_000_000;

let gw: TestGateway;
let openai: OpenAiUpstream;
let gemini: GeminiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  [openai, gemini] = await Promise.all([startOpenAiUpstream(), startGeminiUpstream()]);
  for (const [type, upstream] of [["openai", openai], ["gemini", gemini]] as const) {
    const model = `several-${type}`;
    expect((await gw.admin("POST", "/v1/admin/channels", { name: model, type, base_url: upstream.url, api_key: "key", models: [model] })).status).toBe(201);
    expect((await gw.admin("POST", "/v1/admin/prices", { model, ...PRICE_BODY })).status).toBe(200);
  }
});
afterAll(async () => {
  await gw.close();
  await Promise.all([openai.close(), gemini.close()]);
});
beforeEach(() => {
  for (const upstream of [openai, gemini]) {
    upstream.setBehavior({});
    upstream.reset();
  }
});

/** How each caller format asks its own upstream for `answers` answers, and what that upstream's fixtures report. */
const FORMATS = {
  openai: {
    upstream: () => openai,
    path: () => "/v1/chat/completions",
    body: (answers: number, stream: boolean) => ({
      model: "several-openai",
      n: answers,
      max_tokens: MAX_TOKENS,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      messages: [{ role: "user", content: PROMPT }],
    }),
    plain: OPENAI_SEVERAL_PLAIN,
    stream: OPENAI_SEVERAL_STREAM,
    answering: (completion: unknown) => ({ completion }),
    withoutUsage: ({ usage: _usage, ...completion }: any) => completion,
    streamWithoutUsage: () => sseOf(openAiChunksWithoutUsage(OPENAI_SEVERAL_STREAM), true),
    texts: openAiAnswerTexts,
    /** The role chunks, six text chunks, then choice 0's finish. */
    eventsUntilFirstFinish: 10,
    /** The prompt a stream cut before its usage is charged: OpenAI counts it only in the last chunk, so it is estimated. */
    promptBeforeUsage: () => estimate(PROMPT),
    reported(body: any) {
      return { prompt_tokens: body.usage.prompt_tokens, completion_tokens: body.usage.completion_tokens };
    },
  },
  gemini: {
    upstream: () => gemini,
    path: (stream: boolean) => `/v1beta/models/several-gemini:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
    body: (answers: number, _stream: boolean) => ({
      contents: [{ role: "user", parts: [{ text: PROMPT }] }],
      generationConfig: { candidateCount: answers, maxOutputTokens: MAX_TOKENS },
    }),
    plain: GEMINI_SEVERAL_PLAIN,
    stream: GEMINI_SEVERAL_STREAM,
    answering: (response: unknown) => ({ response }),
    withoutUsage: (response: any) => geminiWithoutUsage([response])[0],
    streamWithoutUsage: () => sseOf(geminiWithoutUsage(fixtureChunks(GEMINI_SEVERAL_STREAM)), false),
    texts: geminiAnswerTexts,
    /** The second chunk finishes candidate 0. */
    eventsUntilFirstFinish: 2,
    /** Gemini counts the prompt on every chunk: a stream cut before its usage is charged that count. */
    promptBeforeUsage: () => fixtureChunks(GEMINI_SEVERAL_STREAM)[0].usageMetadata.promptTokenCount as number,
    reported(body: any) {
      return { prompt_tokens: body.usageMetadata.promptTokenCount, completion_tokens: body.usageMetadata.candidatesTokenCount };
    },
  },
};
type FormatName = keyof typeof FORMATS;
const FORMAT_NAMES = Object.keys(FORMATS) as FormatName[];

function ask(format: FormatName, key: string, answers: number, stream: boolean): Promise<Response> {
  const { path, body } = FORMATS[format];
  return gw.fetch(path(stream), { method: "POST", headers: bearer(key), body: JSON.stringify(body(answers, stream)) });
}

/** The hold of one request for `answers` answers: the prompt's estimate plus max_tokens for each. */
const holdFor = (answers: number) => costOf(estimate(PROMPT), MAX_TOKENS * answers);

describe.each(FORMAT_NAMES)("%s caller", (format) => {
  test("the hold covers every answer: a balance that covers one answer but not three is a 402, and no upstream is called", async () => {
    const { id, key } = await newAccount(gw, holdFor(ANSWERS) - 1);
    expect(holdFor(1)).toBeLessThan(holdFor(ANSWERS) - 1);
    const refused = await ask(format, key, ANSWERS, false);
    expect(refused.status).toBe(402);
    expect((await refused.json()).error).toMatchObject({ type: "insufficient_funds", code: 402 });
    expect(FORMATS[format].upstream().requests).toHaveLength(0);
    const [row] = await usageRows(gw, id);
    expect(row).toMatchObject({ status: 402, cost_micros: 0 });
    // The same balance pays for one answer.
    const one = await ask(format, key, 1, false);
    expect(one.status).toBe(200);
    await one.text();
    await expectBooksBalanced(gw);
  });

  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "plain"}: one usage row with the upstream's usage, held for every answer and settled from it`, async () => {
      const { upstream, reported } = FORMATS[format];
      const fixture = stream ? FORMATS[format].stream : FORMATS[format].plain;
      upstream().setBehavior(stream ? { streamFixture: fixture } : FORMATS[format].answering(jsonFixture(fixture)));
      const usage = reported(stream ? fixtureChunks(fixture).at(-1) : jsonFixture(fixture));
      const { id, key } = await newAccount(gw, START);
      const response = await ask(format, key, ANSWERS, stream);
      expect(response.status).toBe(200);
      await response.text();
      const requestId = response.headers.get("x-request-id")!;
      const cost = costOf(usage.prompt_tokens, usage.completion_tokens);
      const rows = await usageRows(gw, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ request_id: requestId, status: 200, stream: stream ? 1 : 0, ...usage, cost_micros: cost });
      expect(await ledgerOf(gw, requestId)).toEqual([
        { kind: "hold", amount_micros: -holdFor(ANSWERS), balance_after_micros: START - holdFor(ANSWERS) },
        { kind: "settle", amount_micros: holdFor(ANSWERS) - cost, balance_after_micros: START - cost },
      ]);
      expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
      await expectBooksBalanced(gw);
    });
  }
});

/** What a request for three answers is charged when the upstream reports no usage: the prompt's estimate and that of every answer's text. */
async function chargedWithoutUsage(format: FormatName, stream: boolean, texts: string[]): Promise<void> {
  const { id, key } = await newAccount(gw, START);
  const response = await ask(format, key, ANSWERS, stream);
  expect(response.status).toBe(200);
  await response.text();
  const cost = costOf(estimate(PROMPT), estimate(texts.join("")));
  const [row] = await usageRows(gw, id);
  expect(row).toMatchObject({ status: 200, prompt_tokens: estimate(PROMPT), completion_tokens: estimate(texts.join("")), cost_micros: cost });
  expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
  await expectBooksBalanced(gw);
}

describe.each(FORMAT_NAMES)("%s upstream reporting no usage", (format) => {
  test("plain: the estimate counts every answer's text", async () => {
    const { upstream, plain, answering, withoutUsage } = FORMATS[format];
    upstream().setBehavior(answering(withoutUsage(jsonFixture(plain))));
    await chargedWithoutUsage(format, false, SEVERAL_TEXTS[format].plain);
  });

  test("streamed, answer 0 finishing first: the estimate counts every answer's text", async () => {
    const { upstream, streamWithoutUsage } = FORMATS[format];
    upstream().setBehavior({ script: streamWithoutUsage });
    await chargedWithoutUsage(format, true, SEVERAL_TEXTS[format].stream);
  });
});

describe.each(FORMAT_NAMES)("%s stream cut once answer 0 finished, the others not", (format) => {
  test("the caller's stream ends with the error event, and the row is a 502 charged for what was streamed", async () => {
    const { upstream, stream, texts, eventsUntilFirstFinish, promptBeforeUsage } = FORMATS[format];
    upstream().setBehavior({ streamFixture: stream, cutAfterEvents: eventsUntilFirstFinish });
    const streamed = texts(fixtureChunks(stream).slice(0, eventsUntilFirstFinish)).join("");
    const { id, key } = await newAccount(gw, START);
    const response = await ask(format, key, ANSWERS, true);
    expect(response.status).toBe(200);
    const sse = await response.text();
    const last = sse.trim().split(/\n\n/).at(-1)!;
    expect(JSON.parse(last.replace(/^data: /, ""))).toMatchObject({ error: { message: expect.stringContaining("ended before the response was complete") } });
    expect(sse).not.toContain("[DONE]");
    const cost = costOf(promptBeforeUsage(), estimate(streamed));
    const [row] = await usageRows(gw, id);
    expect(row).toMatchObject({ status: 502, prompt_tokens: promptBeforeUsage(), completion_tokens: estimate(streamed), cost_micros: cost });
    expect(await account(gw, id)).toEqual({ balance_micros: START - cost, total_spent_micros: cost });
    await expectBooksBalanced(gw);
  });
});

test("a finish an OpenAI-compatible upstream repeats for one choice does not stand for another's: cut before choice 1 finished, the stream is broken", async () => {
  const chunks = fixtureChunks(OPENAI_SEVERAL_STREAM);
  const finishes = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
  const choice0 = finishes.find((chunk) => chunk.choices[0].index === 0);
  const choice2 = finishes.find((chunk) => chunk.choices[0].index === 2);
  // Three finishes, of choices 0, 0 and 2; no [DONE].
  openai.setBehavior({ script: () => sseOf([...chunks.slice(0, FORMATS.openai.eventsUntilFirstFinish), choice0, choice2], false) });
  const { id, key } = await newAccount(gw, START);
  const response = await ask("openai", key, ANSWERS, true);
  const sse = await response.text();
  expect(sse).not.toContain("[DONE]");
  const [row] = await usageRows(gw, id);
  expect(row!.status).toBe(502);
  await expectBooksBalanced(gw);
});
