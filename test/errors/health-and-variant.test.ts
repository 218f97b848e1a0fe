/**
 * /health and /ready (README: draining makes /ready a 503), and the contract variant:
 * /v1/balance exists in Variant A only (spec 4.5).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError } from "../auth/support.ts";

describe("health", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  test("GET /health is 200 without any key", async () => {
    const response = await gw.fetch("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  test("GET /ready is 200 without any key", async () => {
    const response = await gw.fetch("/ready");
    expect(response.status).toBe(200);
    expect((await response.json()).status).toBe("ready");
  });

  test("GET /health ignores a bad key rather than refusing it", async () => {
    const response = await gw.fetch("/health", { headers: { authorization: "Basic nonsense" } });
    expect(response.status).toBe(200);
  });

  test("while draining, /ready is 503 unavailable in the error shape; /health stays 200", async () => {
    gw.services.draining = true;
    try {
      await expectError(await gw.fetch("/ready"), 503, "unavailable");
      expect((await gw.fetch("/health")).status).toBe(200);
    } finally {
      gw.services.draining = false;
    }
    expect((await gw.fetch("/ready")).status).toBe(200);
  });
});

describe("variant", () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    [a, b] = await Promise.all([startTestGateway({ env: { GATEWAY_VARIANT: "A" } }), startTestGateway({ env: { GATEWAY_VARIANT: "B" } })]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  test("Variant B has no /v1/balance: 404 not_found_error, even with a valid key", async () => {
    const { key } = await createToken(b);
    // The key itself is good on B.
    expect((await b.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await expectError(await b.fetch("/v1/balance", { headers: { authorization: `Bearer ${key}` } }), 404, "not_found_error");
  });

  test("Variant A serves /v1/balance with balance, currency, total_spent, last_updated", async () => {
    const { key } = await createToken(a); // a user created with a balance of 10 USD
    const response = await a.fetch("/v1/balance", { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({
      balance: 10,
      currency: "USD",
      total_spent: 0,
      last_updated: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(body.last_updated))).toBe(false);
    expect(body.last_updated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });

  test("Variant A /v1/balance needs a key (401) and an API key, not a management key (403)", async () => {
    await expectError(await a.fetch("/v1/balance"), 401, "authentication_error");
    await expectError(await a.fetch("/v1/balance", { headers: { authorization: `Bearer ${a.managementKey}` } }), 403, "permission_error");
  });

  test("the default variant (no GATEWAY_VARIANT) is A", async () => {
    const plain = await startTestGateway();
    try {
      const response = await plain.fetch("/v1/balance", { headers: { authorization: `Bearer ${plain.demoKey}` } });
      expect(response.status).toBe(200);
      expect(typeof (await response.json()).balance).toBe("number");
    } finally {
      await plain.close();
    }
  });
});
