/**
 * DESIGN.md section 5 (POST /v1/admin/prices) for image models: per-image prices by
 * "<width>x<height>/<standard|hd>" in `image_prices`. A table is stored and shown, bad keys
 * and bad amounts are a 400 that changes nothing, and an image request is billed from the
 * table's entry for its size and quality and refused (400) for a size the table lacks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { expectError } from "./_helpers.ts";
import { expectError as expectErrorResponse } from "../auth/support.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";

const MODEL = "priced-image";
const TABLE = { "1024x1024/standard": 0.02, "1024x1024/hd": 0.05 };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "images", type: "mock", models: [MODEL] })).status).toBe(201);
});
afterAll(() => gw.close());

const priceOf = async (model: string) => (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === model);

describe("storing a size/quality table", () => {
  test("POST stores image_prices and answers with the price record", async () => {
    const response = await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", image_prices: TABLE });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ model: MODEL, mode: "image", per_image: null, image_prices: TABLE });
  });

  test("GET /v1/admin/prices shows the table in USD", async () => {
    expect(await priceOf(MODEL)).toMatchObject({ model: MODEL, mode: "image", per_image: null, image_prices: TABLE });
  });

  test("the table is stored in micro-USD in the database", async () => {
    const row = await gw.database.db.selectFrom("prices").selectAll().where("model", "=", MODEL).executeTakeFirstOrThrow();
    expect(JSON.parse(row.image_prices_json!)).toEqual({ "1024x1024/standard": 20_000, "1024x1024/hd": 50_000 });
  });

  test("the shipped demo-image price shows DALL-E 3's table", async () => {
    expect((await priceOf("demo-image")).image_prices).toEqual({
      "1024x1024/standard": 0.04,
      "1024x1792/standard": 0.08,
      "1792x1024/standard": 0.08,
      "1024x1024/hd": 0.08,
      "1024x1792/hd": 0.12,
      "1792x1024/hd": 0.12,
    });
  });

  const bad: [string, unknown][] = [
    ["key without a width (1024/standard)", { "1024/standard": 0.02 }],
    ["unknown quality (1024x1024/ultra)", { "1024x1024/ultra": 0.02 }],
    ["a word for a key (big)", { big: 0.02 }],
    ["a zero dimension (0x1024/standard)", { "0x1024/standard": 0.02 }],
    ["a side of 5 digits (10000x1024/standard)", { "10000x1024/standard": 0.02 }],
    ["a side of 5 digits (1024x99999/standard)", { "1024x99999/standard": 0.02 }],
    ["upper-case quality (1024x1024/HD)", { "1024x1024/HD": 0.02 }],
    ["a negative price", { "1024x1024/standard": -0.01 }],
    ["more than six decimals", { "1024x1024/standard": 0.0000001 }],
    ["seven significant decimals", { "1024x1024/standard": 0.0200001 }],
    ["a price as a string", { "1024x1024/standard": "0.02" }],
    ["an empty table", {}],
    ["an array", [0.02]],
  ];
  for (const [label, imagePrices] of bad) {
    test(`image_prices with ${label} → 400, and the stored price is unchanged`, async () => {
      const before = await priceOf(MODEL);
      const response = await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", image_prices: imagePrices });
      expectError(response, 400, "invalid_request_error");
      expect(response.body.error.message).toContain("image_prices");
      expect(await priceOf(MODEL)).toEqual(before);
    });
  }
});

describe("billing from the table", () => {
  async function account(): Promise<{ id: string; key: string }> {
    const user = await adminCreateUser(gw, { email: `img-${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: 1 });
    return { id: user.id, key: (await adminCreateToken(gw, { user_id: user.id, name: "k" })).key };
  }
  const generate = (key: string, body: Record<string, unknown>) =>
    gw.fetch("/v1/images/generations", { method: "POST", headers: bearer(key), body: JSON.stringify({ model: MODEL, prompt: "a paper boat", response_format: "b64_json", ...body }) });

  async function costs(userId: string) {
    await gw.services.usage.flush();
    const rows = await gw.database.db.selectFrom("usage_logs").select(["cost_micros", "status"]).where("user_id", "=", userId).execute();
    const user = await gw.database.db.selectFrom("users").select("balance_micros").where("id", "=", userId).executeTakeFirstOrThrow();
    return { rows, balance: user.balance_micros };
  }

  const billed: [string, Record<string, unknown>, number][] = [
    ["1024x1024/hd at 0.05", { size: "1024x1024", quality: "hd" }, 50_000],
    ["1024x1024/standard at 0.02 (the default quality)", { size: "1024x1024" }, 20_000],
    ["no size: 1024x1024, the table's size, at 0.02", {}, 20_000],
    ["n=2 at 1024x1024/hd: 2 × 0.05", { n: 2, size: "1024x1024", quality: "hd" }, 100_000],
  ];
  for (const [label, body, cost] of billed) {
    test(`${label} → ${cost} micro-USD`, async () => {
      const { id, key } = await account();
      const response = await generate(key, body);
      expect(response.status).toBe(200);
      expect((await response.json()).data).toHaveLength((body.n as number | undefined) ?? 1);
      expect(await costs(id)).toEqual({ rows: [{ cost_micros: cost, status: 200 }], balance: 1_000_000 - cost });
      const usage = await gw.admin("GET", `/v1/admin/usage?user_id=${id}`);
      expect(usage.body.usage[0].cost).toBe(cost / 1e6);
    }, 15_000);
  }

  test("a size not in the table (1792x1024) → 400 naming the sizes the model makes, nothing charged", async () => {
    const { id, key } = await account();
    const message = await expectErrorResponse(await generate(key, { size: "1792x1024", quality: "hd" }), 400, "invalid_request_error");
    expect(message).toContain("'size'");
    expect(message).toContain("1024x1024");
    expect(await costs(id)).toEqual({ rows: [], balance: 1_000_000 });
  });

  test("a size the default set has but this table lacks (256x256) is refused too", async () => {
    const { key } = await account();
    await expectErrorResponse(await generate(key, { size: "256x256" }), 400, "invalid_request_error");
  });

  test("a quality the table lacks for a size → 400 naming it; left out, the quality is one the table prices", async () => {
    expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", image_prices: { "512x512/hd": 0.03 } })).status).toBe(200);
    const { id, key } = await account();
    const message = await expectErrorResponse(await generate(key, { size: "512x512", quality: "standard" }), 400, "invalid_request_error");
    expect(message).toContain("standard");
    const hd = await generate(key, { size: "512x512", quality: "hd" });
    expect(hd.status).toBe(200);
    // The mock says it made standard, which the table does not price: charged as held, at hd.
    const unnamed = await generate(key, { size: "512x512" });
    expect(unnamed.status).toBe(200);
    expect(await costs(id)).toEqual({ rows: [{ cost_micros: 30_000, status: 200 }, { cost_micros: 30_000, status: 200 }], balance: 940_000 });
    expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", image_prices: TABLE })).status).toBe(200);
  });

  test("image_prices null: the flat per_image price applies to any default size", async () => {
    expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", per_image: 0.011, image_prices: null })).status).toBe(200);
    const { id, key } = await account();
    expect((await generate(key, { size: "256x256" })).status).toBe(200);
    expect((await costs(id)).rows).toEqual([{ cost_micros: 11_000, status: 200 }]);
    expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "image", image_prices: TABLE })).status).toBe(200);
  });

  test("the shipped gpt-image-1 price makes its own sizes (1536x1024) and not DALL-E's (256x256)", async () => {
    expect((await gw.admin("POST", "/v1/admin/channels", { name: "gpt-image", type: "mock", models: ["gpt-image-1"] })).status).toBe(201);
    const { id, key } = await account();
    const ok = await gw.fetch("/v1/images/generations", { method: "POST", headers: bearer(key), body: JSON.stringify({ model: "gpt-image-1", prompt: "a kite", size: "1536x1024", quality: "hd", response_format: "b64_json" }) });
    expect(ok.status).toBe(200);
    const refusedSize = await gw.fetch("/v1/images/generations", { method: "POST", headers: bearer(key), body: JSON.stringify({ model: "gpt-image-1", prompt: "a kite", size: "256x256" }) });
    expect(refusedSize.status).toBe(400);
    expect((await costs(id)).rows.map((r) => r.cost_micros)).toEqual([250_000]);
  });

  test("the books balance and no hold is left", async () => {
    const report = await checkLedger(gw.database.db);
    expect(report.problems).toEqual([]);
    expect(report.openHolds).toBe(0);
  });
});
