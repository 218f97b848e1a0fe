import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";

/** A clock the test moves by hand, so "after the window" needs no real waiting. */
let clock = Date.parse("2026-11-21T10:00:00Z");
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ now: () => clock });
});
afterAll(() => gw.close());

async function keyOnPlan(plan: string, overrides: Record<string, number> = {}) {
  const user = await gw.admin("POST", "/v1/admin/users", { email: `${crypto.randomUUID()}@example.com`, balance: 5, plan });
  const token = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "k", ...overrides });
  return token.body.key as string;
}

const chat = (key: string, extra: object = {}) =>
  gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ model: "demo-chat", max_tokens: 20, messages: [{ role: "user", content: "hi" }], ...extra }),
  });

test("the free plan's 11th request within a minute gets 429 with headers, and succeeds after the window", async () => {
  const key = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) {
    const ok = await chat(key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-limit-requests")).toBe("10");
    expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - i));
  }
  const limited = await chat(key);
  expect(limited.status).toBe(429);
  const body = await limited.json();
  expect(body.error).toEqual({ message: expect.stringContaining("requests per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
  expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  expect(limited.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(\.\d+)?s$|^\d+m[\d.]+s$/);
  expect(limited.headers.get("x-ratelimit-limit-tokens")).not.toBeNull();
  clock += 60_000;
  expect((await chat(key)).status).toBe(200);
});

test("10 requests spread over 54 s leave an 11th within the minute refused until the first is a minute old", async () => {
  const key = await keyOnPlan("free");
  const first = clock;
  for (let i = 0; i < 10; i++) {
    if (i > 0) clock += 6_000;
    expect((await chat(key)).status).toBe(200);
  }
  // 59 s after the first: a bucket refilling 10 a minute would have had room for nine more by now.
  clock = first + 59_000;
  const limited = await chat(key);
  expect(limited.status).toBe(429);
  expect(limited.headers.get("retry-after")).toBe("1");
  expect(limited.headers.get("x-ratelimit-reset-requests")).toBe("55s");
  clock = first + 60_000;
  const again = await chat(key);
  expect(again.status).toBe(200);
  expect(again.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  clock += 60_000;
});

test("a refused request never reaches the balance: no usage row is charged for a 429", async () => {
  const key = await keyOnPlan("free");
  for (let i = 0; i < 10; i++) await chat(key);
  const before = await gw.admin("GET", "/v1/admin/usage?limit=1");
  expect((await chat(key)).status).toBe(429);
  const after = await gw.admin("GET", "/v1/admin/usage?limit=1");
  expect(after.body.total).toBe(before.body.total);
  clock += 60_000;
});

test("tokens per minute: a request whose prompt plus max_tokens exceeds what is left gets 429", async () => {
  const key = await keyOnPlan("pro", { tokens_per_minute: 100, requests_per_minute: 1000 });
  const first = await chat(key, { max_tokens: 60 });
  expect(first.status).toBe(200);
  expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("100");
  // The reservation (prompt + 60) was settled to the mock's real usage, so 60 more fit.
  expect(Number(first.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(100);
  const second = await chat(key, { max_tokens: 60 });
  expect(second.status).toBe(200);
  const third = await chat(key, { max_tokens: 90 });
  expect(third.status).toBe(429);
  expect((await third.json()).error.message).toContain("tokens per minute");
  clock += 60_000;
  expect((await chat(key, { max_tokens: 90 })).status).toBe(200);
});

test("a key's own override replaces its plan's limit", async () => {
  const key = await keyOnPlan("free", { requests_per_minute: 2 });
  expect((await chat(key)).headers.get("x-ratelimit-limit-requests")).toBe("2");
  expect((await chat(key)).status).toBe(200);
  expect((await chat(key)).status).toBe(429);
  clock += 60_000;
});

test("the settings endpoint reports the default limits, and a plan change applies", async () => {
  const settings = await gw.admin("GET", "/v1/admin/settings");
  expect(settings.body.rate_limits).toEqual({ requests_per_minute: 10, tokens_per_minute: expect.any(Number) });
  await gw.admin("PATCH", "/v1/admin/settings", { plans: { tiny: { requests_per_minute: 1, tokens_per_minute: 100_000 } } });
  const key = await keyOnPlan("tiny");
  expect((await chat(key)).status).toBe(200);
  expect((await chat(key)).status).toBe(429);
  clock += 60_000;
});

test("plans named like Object.prototype's members (constructor, __proto__) get the default limits, not none", async () => {
  for (const plan of ["constructor", "__proto__"]) {
    const key = await keyOnPlan(plan);
    for (let i = 0; i < 10; i++) expect((await chat(key)).status).toBe(200);
    const limited = await chat(key);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
  }
  clock += 60_000;
});

test("a settings patch with a plan named __proto__ is refused, and changes no plan and no prototype", async () => {
  const before = (await gw.admin("GET", "/v1/admin/settings")).body.plans;
  const patched = await gw.admin("PATCH", "/v1/admin/settings", JSON.parse('{"plans":{"__proto__":{"requests_per_minute":2,"tokens_per_minute":100000}}}'));
  expect(patched.status).toBe(400);
  expect((await gw.admin("GET", "/v1/admin/settings")).body.plans).toEqual(before);
  const key = await keyOnPlan("never-defined");
  for (let i = 0; i < 10; i++) expect((await chat(key)).status).toBe(200);
  expect((await chat(key)).status).toBe(429);
  clock += 60_000;
});
