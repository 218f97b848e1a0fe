/**
 * Rerank priced by the search, Cohere's unit: a query with up to 100 documents, a document
 * longer than 510 tokens (with its query) split into several. The search units the upstream
 * reports (Cohere's meta.billed_units.search_units) are charged when the request could have
 * made that many; otherwise, and when it reports none, the gateway's own count.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { account, expectBooksBalanced, newAccount, usageRows } from "../billing/_inprocess.ts";
import { rerankSearchUnits } from "../../src/routes/media/rerank-search-units.ts";

const START = 1_000_000;
/** rerank-v3.5's shipped price: 2 USD per 1,000 searches, 2,000 micro-USD a search. */
const MICROS_PER_SEARCH = 2_000;

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** What the loopback upstream reports as billed_units beside the results, if anything. */
let billedUnits: Record<string, number> | undefined;

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { documents: string[] };
      const results = body.documents.map((_, index) => ({ index, relevance_score: 1 / (index + 1) }));
      return Response.json({ id: "rr", results, ...(billedUnits ? { meta: { billed_units: billedUnits } } : {}) });
    },
  });
  gw = await startTestGateway({ strictPricing: true });
  const channel = await gw.admin("POST", "/v1/admin/channels", { name: "cohere", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: "co-key", models: ["rerank-v3.5"] });
  expect(channel.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});
beforeEach(() => {
  billedUnits = undefined;
});

const short = (count: number) => Array.from({ length: count }, (_, i) => `document number ${i} about rivers`);

/** Reranks `documents`; returns the status and the request's charge, the books checked. */
async function rerank(documents: string[]) {
  const { id, key } = await newAccount(gw, START);
  const response = await gw.fetch("/v1/rerank", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "rerank-v3.5", query: "rivers", documents, top_n: 3 }) });
  await response.text();
  const [row] = await usageRows(gw, id);
  expect((await account(gw, id)).balance_micros).toBe(START - row!.cost_micros);
  await expectBooksBalanced(gw);
  return { status: response.status, charged: row!.cost_micros };
}

test("100 short documents are one search (2,000 micro-USD), 101 two, 250 three: not 2 USD per 1,000 documents", async () => {
  expect(await rerank(short(100))).toEqual({ status: 200, charged: MICROS_PER_SEARCH });
  expect(await rerank(short(101))).toEqual({ status: 200, charged: 2 * MICROS_PER_SEARCH });
  expect(await rerank(short(250))).toEqual({ status: 200, charged: 3 * MICROS_PER_SEARCH });
});

test("the upstream's search_units are charged when the request could make that many", async () => {
  billedUnits = { search_units: 2 };
  expect(await rerank(short(150))).toEqual({ status: 200, charged: 2 * MICROS_PER_SEARCH });
});

test("search_units the request could not make (5 for 3 short documents, or 0) are not believed: the gateway's count is charged", async () => {
  billedUnits = { search_units: 5 };
  expect(await rerank(short(3))).toEqual({ status: 200, charged: MICROS_PER_SEARCH });
  billedUnits = { search_units: 0 };
  expect(await rerank(short(3))).toEqual({ status: 200, charged: MICROS_PER_SEARCH });
});

test("counting: a document past 510 tokens with its query is split, each part a document; the most counts a byte a token", () => {
  // 2,100 characters: about 525 tokens, two parts; at most 2,107 bytes with the query, five parts.
  const long = "a".repeat(2_100);
  expect(rerankSearchUnits("query", [long])).toEqual({ estimated: 1, most: 1 });
  expect(rerankSearchUnits("query", Array.from({ length: 60 }, () => long))).toEqual({ estimated: 2, most: 3 });
  expect(rerankSearchUnits("query", [])).toEqual({ estimated: 1, most: 1 });
});
