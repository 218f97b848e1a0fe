import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { estimateMaxUsage } from "../../src/billing/estimate-hold.ts";
import { computeCost } from "../../src/billing/compute-cost.ts";
import { convertOpenAiChatRequestToCanonical } from "../../src/translate/openai-chat/convert-request-to-canonical.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ strictPricing: true });
  await gw.admin("POST", "/v1/admin/prices", { model: "demo-chat", mode: "chat", input_per_million: 3, output_per_million: 15 });
});
afterAll(() => gw.close());

/** A prompt long enough that the mock's reply is cut at max_tokens, so cost equals the hold. */
const body = {
  model: "demo-chat",
  max_tokens: 5,
  temperature: 0.7,
  top_p: 1,
  messages: [{ role: "user" as const, content: "please repeat after me a sentence that is long enough to be cut" }],
};

async function userWithBalance(usd: number, plan = "enterprise") {
  const user = await gw.admin("POST", "/v1/admin/users", { email: `u${crypto.randomUUID()}@example.com`, balance: usd, plan });
  const token = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "k" });
  return { id: user.body.id as string, key: token.body.key as string };
}

function chat(key: string) {
  return gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
}

const holdMicros = () => computeCost(gw.services.prices.get("demo-chat"), estimateMaxUsage(convertOpenAiChatRequestToCanonical(body)));

test("a request's cost equals its hold here, so the arithmetic below is exact", async () => {
  const { id, key } = await userWithBalance(1);
  const response = await chat(key);
  expect(response.status).toBe(200);
  const user = await gw.admin("GET", `/v1/admin/users/${id}`);
  expect(Math.round(user.body.total_usage * 1e6)).toBe(holdMicros());
  expect(Math.round((1 - user.body.balance) * 1e6)).toBe(holdMicros());
});

test("1,000 requests released together against a balance covering exactly 137: 137 succeed, the rest get 402", async () => {
  const n = 137;
  const hold = holdMicros();
  expect(hold).toBeGreaterThan(0);
  const { id, key } = await userWithBalance((n * hold) / 1e6);
  const statuses = await Promise.all(Array.from({ length: 1000 }, () => chat(key).then(async (r) => {
    const text = await r.text();
    if (r.status === 402) expect(JSON.parse(text).error.type).toBe("insufficient_funds");
    return r.status;
  })));
  expect(statuses.filter((s) => s === 200).length).toBe(n);
  expect(statuses.filter((s) => s === 402).length).toBe(1000 - n);
  const user = await gw.admin("GET", `/v1/admin/users/${id}`);
  expect(user.body.balance).toBe(0);
  const report = await checkLedger(gw.database.db);
  expect(report.problems).toEqual([]);
  expect(report.openHolds).toBe(0);
  const usage = await gw.admin("GET", `/v1/admin/usage?user_id=${id}&limit=200`);
  expect(usage.body.total).toBe(1000);
});

test("a model without a price is refused unless settings allow free models", async () => {
  await gw.admin("POST", "/v1/admin/channels", { name: "free", type: "mock", models: ["unpriced-model"] });
  const { key } = await userWithBalance(1);
  const refused = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ model: "unpriced-model", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(refused.status).toBe(400);
  expect((await refused.json()).error.message).toContain("no price");
  await gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: true });
  const served = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ model: "unpriced-model", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(served.status).toBe(200);
  await gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: false });
});

test("an upstream failure after the hold refunds it in full", async () => {
  await gw.admin("POST", "/v1/admin/channels", { name: "dead", type: "openai", base_url: "http://127.0.0.1:9/v1", models: ["dead-model"] });
  await gw.admin("POST", "/v1/admin/prices", { model: "dead-model", input_per_million: 3, output_per_million: 15 });
  const { id, key } = await userWithBalance(1);
  const response = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ ...body, model: "dead-model" }),
  });
  expect(response.status).toBe(502);
  const user = await gw.admin("GET", `/v1/admin/users/${id}`);
  expect(user.body.balance).toBe(1);
  expect(user.body.total_usage).toBe(0);
  const report = await checkLedger(gw.database.db);
  expect(report.problems).toEqual([]);
  expect(report.openHolds).toBe(0);
});

/** A maximum output so large that its price is past the largest number (Infinity), in each caller format. */
const OVERFLOWING_REQUESTS = {
  openai: { path: "/v1/chat/completions", body: { model: "demo-chat", max_tokens: 1e308, messages: [{ role: "user", content: "hi" }] } },
  anthropic: { path: "/v1/messages", body: { model: "demo-chat", max_tokens: 1e308, messages: [{ role: "user", content: "hi" }] } },
  gemini: { path: "/v1beta/models/demo-chat:generateContent", body: { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 1e308 } } },
};

test.each(Object.keys(OVERFLOWING_REQUESTS) as (keyof typeof OVERFLOWING_REQUESTS)[])(
  "a max_tokens whose hold is past the largest number is a 402 like any hold the balance cannot cover, not served without a hold (%s)",
  async (caller) => {
    const { id, key } = await userWithBalance(0.000001);
    const { path, body: request } = OVERFLOWING_REQUESTS[caller];
    const response = await gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(request) });
    expect(response.status).toBe(402);
    expect((await response.json()).error.type).toBe("insufficient_funds");
    const user = await gw.admin("GET", `/v1/admin/users/${id}`);
    expect(user.body.balance).toBe(0.000001);
    const rows = await gw.database.db.selectFrom("usage_logs").select(["status", "cost_micros"]).where("user_id", "=", id).execute();
    expect(rows).toEqual([{ status: 402, cost_micros: 0 }]);
    const report = await checkLedger(gw.database.db);
    expect(report.problems).toEqual([]);
    expect(report.openHolds).toBe(0);
  },
);
