import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE, editedAnthropicStream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { account, expectBooksBalanced, ledgerOf, newAccount, startPricedAnthropic, usageRows } from "./_inprocess.ts";
import { bearer, estimate } from "./_support.ts";
import { WEB_SEARCHES_WITHOUT_MAX } from "../../src/billing/estimate-hold.ts";

/**
 * Anthropic's web_search server tool bills 10 USD per 1,000 searches on top of the tokens,
 * reported as usage.server_tool_use.web_search_requests (in a stream, in message_delta). The
 * gateway charges them at per_1k_web_searches and holds, before the upstream call, the
 * searches the request allows: the tool's max_uses, else WEB_SEARCHES_WITHOUT_MAX.
 * Prices, micro-USD: 3 an input token, 15 an output token, 10,000 a search.
 */

const MODEL = "web-search-model";
const FREE_SEARCH_MODEL = "web-search-unpriced-model";
const PROMPT = "What happened in the news today?";
const MAX_TOKENS = 200;
const START = 10_000_000;
const PER_SEARCH = 10_000;
const USAGE = { input_tokens: 100, output_tokens: 50, server_tool_use: { web_search_requests: 3 } };
/** 100 x 3 + 50 x 15 + 3 searches */
const COST = 300 + 750 + 3 * PER_SEARCH;

let gw: TestGateway;
let upstream: AnthropicUpstream;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gw, upstream, close } = await startPricedAnthropic([
    { model: MODEL, input_per_million: 3, output_per_million: 15, per_1k_web_searches: 10 },
    { model: FREE_SEARCH_MODEL, input_per_million: 3, output_per_million: 15 },
  ]));
});

afterAll(() => close());

const webSearchTool = (maxUses?: unknown) => ({ type: "web_search_20250305", name: "web_search", ...(maxUses === undefined ? {} : { max_uses: maxUses }) });

function ask(key: string, options: { model?: string; stream?: boolean; tools?: object[] } = {}): Promise<Response> {
  const body = { model: options.model ?? MODEL, stream: options.stream ?? false, max_tokens: MAX_TOKENS, tools: options.tools ?? [webSearchTool(5)], messages: [{ role: "user", content: PROMPT }] };
  return gw.fetch("/v1/messages", { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
}

/** The hold of a request that may search `searches` times. */
const holdFor = (searches: number) => estimate(PROMPT) * 3 + MAX_TOKENS * 15 + searches * PER_SEARCH;

/** Asks as a new account; returns its one usage row and the request's ledger rows, once the books are checked. */
async function charged(options: Parameters<typeof ask>[1] = {}) {
  const { id, key } = await newAccount(gw, START);
  const response = await ask(key, options);
  expect(response.status).toBe(200);
  await response.text();
  const [row] = await usageRows(gw, id);
  await expectBooksBalanced(gw);
  expect((await account(gw, id)).total_spent_micros).toBe(row!.cost_micros);
  return { row: row!, ledger: await ledgerOf(gw, response.headers.get("x-request-id")!) };
}

test("plain answer: the searches Anthropic reports are charged at the search price, the hold covered max_uses", async () => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { row, ledger } = await charged();
  expect(row).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, cost_micros: COST });
  expect(ledger[0]).toMatchObject({ kind: "hold", amount_micros: -holdFor(5) });
});

test("stream: the searches message_delta reports are charged", async () => {
  upstream.setBehavior({
    script: () =>
      editedAnthropicStream((data) => {
        if (data.type === "message_start") data.message.usage = { input_tokens: 100, output_tokens: 1, server_tool_use: { web_search_requests: 0 } };
        if (data.type === "message_delta") data.usage = USAGE;
      }),
  });
  const { row } = await charged({ stream: true });
  expect(row).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, cost_micros: COST });
});

test(`a web search tool without max_uses: ${WEB_SEARCHES_WITHOUT_MAX} searches are held`, async () => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { row, ledger } = await charged({ tools: [webSearchTool()] });
  expect(row.cost_micros).toBe(COST);
  expect(ledger[0]).toMatchObject({ kind: "hold", amount_micros: -holdFor(WEB_SEARCHES_WITHOUT_MAX) });
});

test("a model without a search price: the searches are free", async () => {
  upstream.setBehavior({ message: { ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), usage: USAGE } });
  const { row, ledger } = await charged({ model: FREE_SEARCH_MODEL });
  expect(row.cost_micros).toBe(300 + 750);
  expect(ledger[0]).toMatchObject({ kind: "hold", amount_micros: -holdFor(0) });
});

test("a balance that covers the tokens but not max_uses searches gets 402 before any upstream call", async () => {
  const { id, key } = await newAccount(gw, holdFor(5) - 1);
  upstream.reset();
  const response = await ask(key);
  expect(response.status).toBe(402);
  expect((await response.json()).error.type).toBe("insufficient_funds");
  expect(upstream.requests).toHaveLength(0);
  expect((await account(gw, id)).total_spent_micros).toBe(0);
  await expectBooksBalanced(gw);
});

test.each([0, 2.5, "5"])("a max_uses of %p is a 400 before any upstream call", async (maxUses) => {
  const { key } = await newAccount(gw, START);
  upstream.reset();
  const response = await ask(key, { tools: [webSearchTool(maxUses)] });
  expect(response.status).toBe(400);
  expect((await response.json()).error.message).toContain("max_uses");
  expect(upstream.requests).toHaveLength(0);
});

/** An Anthropic stream that runs `searches` web searches, then writes `text`, and ends without message_delta or message_stop. */
function streamCutAfterSearches(searches: number, text: string): Response {
  const events: [string, unknown][] = [
    ["message_start", { type: "message_start", message: { id: "msg_cut", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } } }],
  ];
  for (let i = 0; i < searches; i++) {
    const id = `srvtoolu_${i}`;
    events.push(
      ["content_block_start", { type: "content_block_start", index: 2 * i, content_block: { type: "server_tool_use", id, name: "web_search", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: 2 * i, delta: { type: "input_json_delta", partial_json: `{"query":"news ${i}"}` } }],
      ["content_block_stop", { type: "content_block_stop", index: 2 * i }],
      ["content_block_start", { type: "content_block_start", index: 2 * i + 1, content_block: { type: "web_search_tool_result", tool_use_id: id, content: [] } }],
      ["content_block_stop", { type: "content_block_stop", index: 2 * i + 1 }],
    );
  }
  if (text) {
    events.push(
      ["content_block_start", { type: "content_block_start", index: 2 * searches, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 2 * searches, delta: { type: "text_delta", text } }],
    );
  }
  const body = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

test.each([
  [2, "Today the "],
  [1, ""],
])("a stream cut before message_delta after %p searches (text %p) is charged them, counted from its server_tool_use blocks", async (searches, text) => {
  upstream.setBehavior({ script: () => streamCutAfterSearches(searches, text) });
  const { id, key } = await newAccount(gw, START);
  const response = await ask(key, { stream: true });
  await response.text();
  const [row] = await usageRows(gw, id);
  // The prompt as message_start counted it, what was streamed (the searches' queries too) estimated, and the searches.
  expect(row!.status).toBe(502);
  expect(row!.prompt_tokens).toBe(100);
  expect(row!.cost_micros).toBe(100 * 3 + row!.completion_tokens * 15 + searches * PER_SEARCH);
  await expectBooksBalanced(gw);
});
