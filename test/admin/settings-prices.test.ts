import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { call, expectError, expectInteger } from "./_helpers.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

function expectSettingsRecord(s: any): void {
  expect(typeof s.system_name).toBe("string");
  expect(s.system_name.length).toBeGreaterThan(0);
  expect(typeof s.version).toBe("string");
  expect(s.version.length).toBeGreaterThan(0);
  expect(typeof s.features).toBe("object");
  expect(typeof s.features.registration_enabled).toBe("boolean");
  expect(typeof s.features.maintenance_mode).toBe("boolean");
  expect(typeof s.features.default_currency).toBe("string");
  expect(typeof s.rate_limits).toBe("object");
  expectInteger(s.rate_limits.requests_per_minute);
  expectInteger(s.rate_limits.tokens_per_minute);
}

describe("settings", () => {
  test("GET returns the spec 2.12 settings record", async () => {
    const response = await gw.admin("GET", "/v1/admin/settings");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expectSettingsRecord(response.body);
  });

  test("defaults: currency USD, free-plan rate of 10 requests per minute (spec section 8)", async () => {
    const { body } = await gw.admin("GET", "/v1/admin/settings");
    expect(body.features.default_currency).toBe("USD");
    expect(body.rate_limits.requests_per_minute).toBe(10);
  });

  test("PATCH merges: changing requests_per_minute keeps every other field, GET shows it", async () => {
    const before = (await gw.admin("GET", "/v1/admin/settings")).body;
    const patched = await gw.admin("PATCH", "/v1/admin/settings", { rate_limits: { requests_per_minute: 42 } });
    expect(patched.status).toBe(200);
    expectSettingsRecord(patched.body);
    expect(patched.body.rate_limits.requests_per_minute).toBe(42);

    const after = (await gw.admin("GET", "/v1/admin/settings")).body;
    expect(after.rate_limits).toEqual({ ...before.rate_limits, requests_per_minute: 42 });
    expect(after.features).toEqual(before.features);
    expect(after.system_name).toBe(before.system_name);
    expect(after.version).toBe(before.version);
  });

  test("PATCH of one feature flag and the name keeps the other flags", async () => {
    const before = (await gw.admin("GET", "/v1/admin/settings")).body;
    const patched = await gw.admin("PATCH", "/v1/admin/settings", {
      system_name: "Acme Gateway",
      features: { registration_enabled: !before.features.registration_enabled },
    });
    expect(patched.status).toBe(200);
    const after = (await gw.admin("GET", "/v1/admin/settings")).body;
    expect(after.system_name).toBe("Acme Gateway");
    expect(after.features).toEqual({ ...before.features, registration_enabled: !before.features.registration_enabled });
    expect(after.rate_limits).toEqual(before.rate_limits);
  });

  test("concurrent PATCHes of different fields both stay", async () => {
    const [first, second] = await Promise.all([
      gw.admin("PATCH", "/v1/admin/settings", { system_name: "Concurrent A" }),
      gw.admin("PATCH", "/v1/admin/settings", { rate_limits: { requests_per_minute: 4_321 } }),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const after = (await gw.admin("GET", "/v1/admin/settings")).body;
    expect({ name: after.system_name, rpm: after.rate_limits.requests_per_minute }).toEqual({ name: "Concurrent A", rpm: 4_321 });
  });

  test("a PATCH on an instance that has not yet seen another's keeps the other's change", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gateway-settings-"));
    const one = await startTestGateway({ dir });
    // Not polling: it serves the settings it loaded at start until its own PATCH reloads them.
    const other = await startTestGateway({ dir });
    try {
      expect((await other.admin("PATCH", "/v1/admin/settings", { system_name: "Named on the other" })).status).toBe(200);
      expect((await one.admin("GET", "/v1/admin/settings")).body.system_name).not.toBe("Named on the other");
      const patched = await one.admin("PATCH", "/v1/admin/settings", { features: { registration_enabled: false } });
      expect({ name: patched.body.system_name, registration: patched.body.features.registration_enabled }).toEqual({ name: "Named on the other", registration: false });
    } finally {
      await other.close({ keepFiles: true });
      await one.close({ keepFiles: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [label, patch] of [
    ["negative requests_per_minute", { rate_limits: { requests_per_minute: -1 } }],
    ["fractional tokens_per_minute", { rate_limits: { tokens_per_minute: 1.5 } }],
    ["string requests_per_minute", { rate_limits: { requests_per_minute: "60" } }],
    ["non-boolean maintenance_mode", { features: { maintenance_mode: "yes" } }],
    ["empty system_name", { system_name: "" }],
    // Balances, prices and top-ups are USD numbers: /v1/balance labelled them EUR after this.
    ["a default_currency other than USD", { features: { default_currency: "EUR" } }],
    ["a JSON array body", [1, 2]],
  ] as const) {
    test(`PATCH with ${label} is a 400 and changes nothing`, async () => {
      const before = (await gw.admin("GET", "/v1/admin/settings")).body;
      expectError(await gw.admin("PATCH", "/v1/admin/settings", patch), 400, "invalid_request_error");
      expect((await gw.admin("GET", "/v1/admin/settings")).body).toEqual(before);
    });
  }

  test("PATCH with malformed JSON is a 400", async () => {
    const response = await call(gw, "PATCH", "/v1/admin/settings", {
      headers: { authorization: `Bearer ${gw.managementKey}`, "content-type": "application/json" },
      body: "{rate_limits:",
    });
    expectError(response, 400, "invalid_request_error");
  });
});

describe("prices", () => {
  test("GET returns {prices:[...]} with USD numbers; demo-chat is priced", async () => {
    const response = await gw.admin("GET", "/v1/admin/prices");
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.prices)).toBe(true);
    expect(response.body.prices.length).toBeGreaterThan(0);
    for (const price of response.body.prices) {
      expect(typeof price.model).toBe("string");
      expect(typeof price.mode).toBe("string");
      for (const [name, value] of Object.entries(price)) {
        if (name === "model" || name === "mode") continue;
        if (name === "image_prices" && value !== null) {
          for (const usd of Object.values(value as Record<string, unknown>)) expect(typeof usd).toBe("number");
          continue;
        }
        if (name === "long_prompt" && value !== null) {
          for (const usd of Object.values(value as Record<string, unknown>)) if (usd !== null) expect(typeof usd).toBe("number");
          continue;
        }
        if (value !== null) expect(typeof value).toBe("number");
      }
    }
    const demo = response.body.prices.find((p: any) => p.model === "demo-chat");
    expect(demo).toBeDefined();
    expect(demo.mode).toBe("chat");
    expect(demo.input_per_million).toBeGreaterThan(0);
    expect(demo.output_per_million).toBeGreaterThan(0);
  });

  test("POST sets a price; GET shows it in USD", async () => {
    const set = await gw.admin("POST", "/v1/admin/prices", {
      model: "acme-large",
      input_per_million: 2.5,
      output_per_million: 10,
      cached_input_per_million: 0.125,
    });
    expect(set.status).toBeGreaterThanOrEqual(200);
    expect(set.status).toBeLessThan(300);
    expect(set.body.model).toBe("acme-large");
    expect(set.body.mode).toBe("chat");
    expect(set.body.input_per_million).toBe(2.5);

    const listed = (await gw.admin("GET", "/v1/admin/prices")).body.prices.filter((p: any) => p.model === "acme-large");
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ model: "acme-large", mode: "chat", input_per_million: 2.5, output_per_million: 10, cached_input_per_million: 0.125 });
  });

  test("POST again for the same model replaces its price (one entry)", async () => {
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "acme-small", input_per_million: 1, output_per_million: 2 })).status).toBeLessThan(300);
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "acme-small", input_per_million: 0.3, output_per_million: 0.6 })).status).toBeLessThan(300);
    const listed = (await gw.admin("GET", "/v1/admin/prices")).body.prices.filter((p: any) => p.model === "acme-small");
    expect(listed).toHaveLength(1);
    expect(listed[0].input_per_million).toBe(0.3);
    expect(listed[0].output_per_million).toBe(0.6);
  });

  test("POST with a non-chat mode stores that mode and its unit price", async () => {
    const set = await gw.admin("POST", "/v1/admin/prices", { model: "acme-embed", mode: "embedding", input_per_million: 0.02 });
    expect(set.status).toBeLessThan(300);
    const listed = (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "acme-embed");
    expect(listed).toMatchObject({ mode: "embedding", input_per_million: 0.02 });
  });

  test("a zero price (free model) is accepted", async () => {
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "acme-free", input_per_million: 0, output_per_million: 0 })).status).toBeLessThan(300);
    const listed = (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "acme-free");
    expect(listed).toMatchObject({ input_per_million: 0, output_per_million: 0 });
  });

  /** The unit prices of Anthropic's cache writes and server tools, with a value each. */
  const BILLED_EXTRAS = { cache_write_per_million: 3.75, cache_write_1h_per_million: 6, per_1k_web_searches: 10 };

  test("the cache-write and web-search prices are stored in micro-USD, shown in USD, and null when left out", async () => {
    const set = await gw.admin("POST", "/v1/admin/prices", { model: "acme-cache", input_per_million: 3, output_per_million: 15, ...BILLED_EXTRAS });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject(BILLED_EXTRAS);
    expect((await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "acme-cache")).toMatchObject(BILLED_EXTRAS);
    const row = await gw.database.db.selectFrom("prices").selectAll().where("model", "=", "acme-cache").executeTakeFirstOrThrow();
    expect(row).toMatchObject({ cache_write_per_million_micros: 3_750_000, cache_write_1h_per_million_micros: 6_000_000, per_1k_web_searches_micros: 10_000_000 });
    const plain = await gw.admin("POST", "/v1/admin/prices", { model: "acme-cache", input_per_million: 3 });
    expect(plain.body).toMatchObject(Object.fromEntries(Object.keys(BILLED_EXTRAS).map((name) => [name, null])));
  });

  test("per_1k_searches (rerank by the search) is stored in micro-USD, shown in USD, refused negative; rerank-v3.5 ships with Cohere's 2 USD", async () => {
    const set = await gw.admin("POST", "/v1/admin/prices", { model: "acme-rerank", mode: "rerank", per_1k_searches: 1.5 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ per_1k_searches: 1.5, per_1k_documents: null });
    const row = await gw.database.db.selectFrom("prices").selectAll().where("model", "=", "acme-rerank").executeTakeFirstOrThrow();
    expect(row.per_1k_searches_micros).toBe(1_500_000);
    expectError(await gw.admin("POST", "/v1/admin/prices", { model: "acme-rerank", mode: "rerank", per_1k_searches: -1 }), 400, "invalid_request_error");
    const cohere = (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "rerank-v3.5");
    expect(cohere).toMatchObject({ per_1k_searches: 2, per_1k_documents: null });
  });

  test("the shipped Claude prices carry Anthropic's cache-write and web-search prices", async () => {
    const sonnet = (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: any) => p.model === "claude-sonnet-4-20250514");
    expect(sonnet).toMatchObject({ input_per_million: 3, cache_write_per_million: 3.75, cache_write_1h_per_million: 6, per_1k_web_searches: 10 });
  });

  for (const name of Object.keys(BILLED_EXTRAS)) {
    for (const [label, value] of [["negative", -1], ["a string", "6"], ["more than 6 decimals", 0.0000001], ["above 1,000,000 USD", 1_000_001]] as const) {
      test(`POST with ${name} ${label} is a 400 and stores nothing`, async () => {
        expectError(await gw.admin("POST", "/v1/admin/prices", { model: "bad-extra", input_per_million: 1, [name]: value }), 400, "invalid_request_error");
        expect((await gw.admin("GET", "/v1/admin/prices")).body.prices.some((p: any) => p.model === "bad-extra")).toBe(false);
      });
    }
  }

  for (const [label, body] of [
    ["a negative price", { model: "bad-1", input_per_million: -1 }],
    ["a price as a string", { model: "bad-2", input_per_million: "2.5" }],
    ["more than 6 decimals", { model: "bad-3", input_per_million: 0.0000001 }],
    ["an unknown mode", { model: "bad-4", mode: "video", input_per_million: 1 }],
    ["no model", { input_per_million: 1 }],
    ["an empty model", { model: "", input_per_million: 1 }],
  ] as const) {
    test(`POST with ${label} is a 400 and stores nothing`, async () => {
      expectError(await gw.admin("POST", "/v1/admin/prices", body), 400, "invalid_request_error");
      const prices = (await gw.admin("GET", "/v1/admin/prices")).body.prices;
      expect(prices.some((p: any) => typeof p.model === "string" && p.model.startsWith("bad-"))).toBe(false);
    });
  }
});
