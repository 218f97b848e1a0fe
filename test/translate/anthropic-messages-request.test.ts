import { describe, expect, test } from "bun:test";
import { parseOrThrow } from "../../src/lib/validate.ts";
import { MessagesRequestSchema } from "../../src/translate/anthropic-messages/request-schema.ts";
import { convertAnthropicRequestToCanonical } from "../../src/translate/anthropic-messages/convert-request-to-canonical.ts";
import { estimateMaxUsage, WEB_SEARCHES_WITHOUT_MAX } from "../../src/billing/estimate-hold.ts";

/** The messages request translation on its own: what it tells billing of the web searches a request allows. */

const canonicalOf = (tools: object[]) =>
  convertAnthropicRequestToCanonical(parseOrThrow(MessagesRequestSchema, { model: "m", max_tokens: 10, tools, messages: [{ role: "user", content: "hi" }] }));

const search = (version: string, maxUses?: number) => ({ type: `web_search_${version}`, name: "web_search", ...(maxUses === undefined ? {} : { max_uses: maxUses }) });
const FETCH = { type: "web_fetch_20250910", name: "web_fetch", max_uses: 7 };
const CUSTOM = { name: "weather", input_schema: { type: "object" } };

describe("convertAnthropicRequestToCanonical: web searches", () => {
  test.each([
    ["no web search tool", [CUSTOM, FETCH], undefined, undefined],
    ["one with max_uses", [search("20250305", 4)], { maxUses: 4 }, 4],
    ["two with max_uses, of any version: their sum", [search("20250305", 2), search("20260209", 3), FETCH], { maxUses: 5 }, 5],
    ["one without max_uses", [search("20250305", 2), search("20260209")], {}, WEB_SEARCHES_WITHOUT_MAX],
  ])("%s", (_, tools, webSearch, held) => {
    const request = canonicalOf(tools);
    expect(request.native?.webSearch).toEqual(webSearch);
    expect(estimateMaxUsage(request).webSearches).toBe(held);
  });
});
