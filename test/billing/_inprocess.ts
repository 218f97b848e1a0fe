import { expect } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { bearer, PRICE_BODY, waitFor } from "./_support.ts";
import type { ProcessIdentity } from "../../src/billing/instance-registry.ts";
import type { Logger } from "../../src/lib/logger.ts";

/** Helpers for billing tests against an in-process gateway (test/helpers/gateway.ts). */

/**
 * A strictly priced in-process gateway (with `env`, logging to `log`) whose one channel is a
 * loopback OpenAI upstream serving `model` at PRICE_BODY. `close` stops both.
 */
export async function startPricedLoopback(model: string, env?: Record<string, string>, log?: Logger): Promise<{ gw: TestGateway; upstream: OpenAiUpstream; close(): Promise<void> }> {
  const gw = await startTestGateway({ strictPricing: true, env, log });
  const upstream = await startOpenAiUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "loopback", type: "openai", base_url: upstream.url, models: [model] })).status).toBe(201);
  expect((await gw.admin("POST", "/v1/admin/prices", { model, ...PRICE_BODY })).status).toBe(200);
  return closingBoth(gw, upstream);
}

/** `gw` and its `upstream`, with a `close` that stops both. */
function closingBoth<U extends { close(): Promise<void> }>(gw: TestGateway, upstream: U): { gw: TestGateway; upstream: U; close(): Promise<void> } {
  return {
    gw,
    upstream,
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}

/**
 * A strictly priced in-process gateway whose models are served by one loopback Anthropic
 * upstream, each on a channel of its own, at its price (a POST /v1/admin/prices body). `close` stops both.
 */
export async function startPricedAnthropic(prices: ({ model: string } & Record<string, unknown>)[]): Promise<{ gw: TestGateway; upstream: AnthropicUpstream; close(): Promise<void> }> {
  const gw = await startTestGateway({ strictPricing: true });
  const upstream = await startAnthropicUpstream();
  for (const price of prices) {
    expect((await gw.admin("POST", "/v1/admin/channels", { name: price.model, type: "anthropic", base_url: upstream.url, api_key: "k", models: [price.model] })).status).toBe(201);
    expect((await gw.admin("POST", "/v1/admin/prices", price)).status).toBe(200);
  }
  return closingBoth(gw, upstream);
}

/** A new enterprise account with `micros` of balance and a key. */
export async function newAccount(gw: TestGateway, micros: number): Promise<{ id: string; key: string }> {
  const user = await adminCreateUser(gw, { email: `b${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: micros / 1e6 });
  const token = await adminCreateToken(gw, { user_id: user.id, name: "k" });
  return { id: user.id, key: token.key };
}

export function chat(gw: TestGateway, key: string, body: unknown): Promise<Response> {
  return gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
}

/** The account's usage rows, oldest first (waits up to 2 s for `count` of them). */
export async function usageRows(gw: TestGateway, userId: string, count = 1) {
  return waitFor(
    `${count} usage row(s)`,
    async () => {
      const rows = await gw.database.db.selectFrom("usage_logs").selectAll().where("user_id", "=", userId).orderBy("created_at").orderBy("id").execute();
      return rows.length >= count ? rows : null;
    },
    2_000,
  );
}

/** The ledger rows of one request (its `reference`), in order. */
export function ledgerOf(gw: TestGateway, requestId: string) {
  return gw.database.db.selectFrom("ledger").select(["kind", "amount_micros", "balance_after_micros"]).where("reference", "=", requestId).orderBy("id").execute();
}

export async function account(gw: TestGateway, userId: string) {
  return gw.database.db.selectFrom("users").select(["balance_micros", "total_spent_micros"]).where("id", "=", userId).executeTakeFirstOrThrow();
}

/** Every account's ledger sums to its balance and no hold is open. */
export async function expectBooksBalanced(gw: TestGateway): Promise<void> {
  const report = await checkLedger(gw.database.db);
  expect(report.problems).toEqual([]);
  expect(report.openHolds).toBe(0);
}

/** The one usage row of `response` (by its x-request-id), once the books are checked: balanced, no hold open. */
export async function onlyUsageRowOf(gw: TestGateway, response: Response) {
  await gw.services.usage.flush();
  await expectBooksBalanced(gw);
  const rows = await gw.database.db.selectFrom("usage_logs").selectAll().where("request_id", "=", response.headers.get("x-request-id")!).execute();
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

/** Reads the SSE body until `until(text so far)` holds, then aborts (the client hangs up); returns what was read. */
export async function readUntilThenAbort(response: Response, controller: AbortController, until: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 5_000;
  while (!until(text)) {
    if (Date.now() > deadline) throw new Error(`condition not reached; read so far:\n${text}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`stream ended before the cut point; read:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return text;
}

/** Identities for gateways of one test process whose liveness the test decides: a pid ended is dead to the others. */
export function fakeProcesses(host: string): { identity(pid: number): ProcessIdentity; end(pid: number): void } {
  const running = new Set<number>();
  return {
    identity(pid) {
      running.add(pid);
      return { host, pid, isAlive: (other) => running.has(other) };
    },
    end: (pid) => void running.delete(pid),
  };
}

/** Runs `gw`'s change feed, as a running gateway does, until `gw` counts itself `alone` (or not). */
export async function whenFeedSees(gw: TestGateway, alone: boolean): Promise<void> {
  gw.services.changes.start(20);
  try {
    await waitFor(`${alone ? "no other" : "another"} instance seen`, () => gw.services.instance.alone === alone);
  } finally {
    gw.services.changes.stop();
  }
}
