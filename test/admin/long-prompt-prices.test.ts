/**
 * DESIGN.md section 5 (POST /v1/admin/prices) for chat models priced by prompt length:
 * `long_prompt` names a threshold in tokens (`above_tokens`) and the token prices, in USD, that
 * apply above it, under the names of the standard ones. It is stored in micro-USD, shown in USD
 * (null for a model without one), and every bad tier is a 400 in the spec's shape that changes
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "./_helpers.ts";

const MODEL = "priced-long-prompt";
const TIER = { above_tokens: 200_000, input_per_million: 2.5, output_per_million: 15, cached_input_per_million: 0.25 };
/** The tier as shown: the prices it leaves out are null. */
const TIER_SHOWN = { ...TIER, cache_write_per_million: null, cache_write_1h_per_million: null };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
});
afterAll(() => gw.close());

const priceOf = async (model: string) => (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === model);
const setPrice = (body: object) => gw.admin("POST", "/v1/admin/prices", { model: MODEL, input_per_million: 1.25, output_per_million: 10, ...body });

describe("storing a tier", () => {
  test("POST stores long_prompt and answers with it in USD; GET lists it", async () => {
    const response = await setPrice({ long_prompt: TIER });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ model: MODEL, mode: "chat", input_per_million: 1.25, long_prompt: TIER_SHOWN });
    expect(await priceOf(MODEL)).toMatchObject({ long_prompt: TIER_SHOWN });
  });

  test("the tier is stored in micro-USD, as one JSON value", async () => {
    await setPrice({ long_prompt: TIER });
    const row = await gw.database.db.selectFrom("prices").select("long_prompt_json").where("model", "=", MODEL).executeTakeFirstOrThrow();
    expect(JSON.parse(row.long_prompt_json!)).toEqual({
      aboveTokens: 200_000,
      inputPerMillion: 2_500_000,
      outputPerMillion: 15_000_000,
      cachedInputPerMillion: 250_000,
      cacheWritePerMillion: null,
      cacheWrite1hPerMillion: null,
    });
  });

  test("a price set again without long_prompt, or with null, has none", async () => {
    for (const body of [{}, { long_prompt: null }]) {
      await setPrice({ long_prompt: TIER });
      expect((await setPrice(body)).body.long_prompt).toBeNull();
      expect((await priceOf(MODEL)).long_prompt).toBeNull();
    }
  });

  test("a gateway started on the same database serves the stored tier", async () => {
    await setPrice({ long_prompt: TIER });
    await gw.services.prices.load();
    expect(gw.services.prices.get(MODEL)?.longPrompt).toMatchObject({ aboveTokens: 200_000, inputPerMillion: 2_500_000 });
  });

  test("the shipped Gemini and Claude Sonnet 4 prices show their tiers; a model without one shows null", async () => {
    expect(await priceOf("gemini-2.5-pro")).toMatchObject({ cached_input_per_million: 0.125, long_prompt: { above_tokens: 200_000, input_per_million: 2.5, output_per_million: 15, cached_input_per_million: 0.25 } });
    expect(await priceOf("gemini-3.1-pro-preview")).toMatchObject({ input_per_million: 2, long_prompt: { above_tokens: 200_000, input_per_million: 4, output_per_million: 18, cached_input_per_million: 0.4 } });
    expect(await priceOf("claude-sonnet-4-20250514")).toMatchObject({
      long_prompt: { above_tokens: 200_000, input_per_million: 6, output_per_million: 22.5, cached_input_per_million: 0.6, cache_write_per_million: 7.5, cache_write_1h_per_million: 12 },
    });
    expect((await priceOf("claude-sonnet-4-6")).long_prompt).toBeNull();
  });
});

describe("a bad tier is a 400 naming long_prompt, and the stored price is unchanged", () => {
  const bad: [string, object][] = [
    ["a threshold of 0", { long_prompt: { ...TIER, above_tokens: 0 } }],
    ["a negative threshold", { long_prompt: { ...TIER, above_tokens: -200_000 } }],
    ["a fractional threshold", { long_prompt: { ...TIER, above_tokens: 200_000.5 } }],
    ["a threshold as a string", { long_prompt: { ...TIER, above_tokens: "200000" } }],
    ["a threshold past the largest exact integer", { long_prompt: { ...TIER, above_tokens: 2 ** 53 } }],
    ["no threshold", { long_prompt: { input_per_million: 2.5 } }],
    ["no price", { long_prompt: { above_tokens: 200_000 } }],
    ["only null prices", { long_prompt: { above_tokens: 200_000, input_per_million: null } }],
    ["a negative price", { long_prompt: { ...TIER, output_per_million: -1 } }],
    ["a price as a string", { long_prompt: { ...TIER, input_per_million: "2.5" } }],
    ["a price of more than 6 decimals", { long_prompt: { ...TIER, cached_input_per_million: 0.0000001 } }],
    ["a price above 1,000,000 USD", { long_prompt: { ...TIER, input_per_million: 1_000_001 } }],
    ["a price no tier has (per_image)", { long_prompt: { ...TIER, per_image: 1 } }],
    ["an unknown field", { long_prompt: { ...TIER, above: 1 } }],
    ["an array", { long_prompt: [TIER] }],
    ["a number", { long_prompt: 200_000 }],
    ["an embedding model", { mode: "embedding", long_prompt: TIER }],
    ["an image model", { mode: "image", per_image: 0.04, long_prompt: TIER }],
  ];
  for (const [label, body] of bad) {
    test(label, async () => {
      expect((await setPrice({ long_prompt: TIER })).status).toBe(200);
      const before = await priceOf(MODEL);
      expect(before.long_prompt).toEqual(TIER_SHOWN);
      const response = await setPrice(body);
      expectError(response, 400, "invalid_request_error");
      expect(response.body.error.message).toContain("long_prompt");
      expect(await priceOf(MODEL)).toEqual(before);
    });
  }
});
