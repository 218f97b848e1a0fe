import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway.ts";
import { fixtureEvents, jsonFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { account, chat, expectBooksBalanced, ledgerOf, newAccount, startPricedLoopback, usageRows } from "./_inprocess.ts";
import { costOf, estimate } from "./_support.ts";
import { LeaseBook } from "../../src/billing/lease-book.ts";

/**
 * The documented overdraft (src/billing/settle-holds.ts, estimate-hold.ts): a request whose
 * actual cost exceeds its hold (here the upstream reports more completion tokens than
 * max_tokens) is still charged in full. The balance may go negative by that excess only, and
 * the account's next request is refused with 402 before any upstream call.
 */

const MODEL = "overdraft-model";
const PROMPT = "Write as much as you like.";
const MAX_TOKENS = 5;
const HOLD = costOf(estimate(PROMPT), MAX_TOKENS);
/** Far beyond max_tokens: the upstream ignored the limit. */
const REPORTED_OUTPUT = 400;
const COST = costOf(estimate(PROMPT), REPORTED_OUTPUT);
const EXCESS = COST - HOLD;

let gw: TestGateway;
let upstream: OpenAiUpstream;

let loopback: Awaited<ReturnType<typeof startPricedLoopback>>;

beforeAll(async () => {
  loopback = await startPricedLoopback(MODEL);
  ({ gw, upstream } = loopback);
});

afterAll(() => loopback.close());

const overUsage = { prompt_tokens: estimate(PROMPT), completion_tokens: REPORTED_OUTPUT, total_tokens: estimate(PROMPT) + REPORTED_OUTPUT };
const body = (stream: boolean) => ({ model: MODEL, stream, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: PROMPT }] });

/** The stream fixture with its final usage chunk reporting `overUsage`. */
function overUsageStream(): Response {
  const text = fixtureEvents("openai-chat-stream.sse")
    .map((data) => {
      if (data === "[DONE]") return `data: ${data}\n\n`;
      const chunk = JSON.parse(data);
      if (chunk.usage) chunk.usage = overUsage;
      return `data: ${JSON.stringify(chunk)}\n\n`;
    })
    .join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

for (const stream of [false, true]) {
  test(`a cost above the hold is charged in full, the balance goes negative by the excess only, the next request gets 402 (${stream ? "stream" : "plain"})`, async () => {
    expect(EXCESS).toBeGreaterThan(0);
    upstream.setBehavior(stream ? { script: () => overUsageStream() } : { completion: { ...jsonFixture("openai-chat-completion.json"), usage: overUsage } });
    upstream.reset();
    // The balance covers the hold exactly, not a micro-USD more.
    const { id, key } = await newAccount(gw, HOLD);
    const response = await chat(gw, key, body(stream));
    expect(response.status).toBe(200);
    await response.text();
    const requestId = response.headers.get("x-request-id")!;

    const [row] = await usageRows(gw, id);
    expect(row).toMatchObject({ request_id: requestId, status: 200, prompt_tokens: estimate(PROMPT), completion_tokens: REPORTED_OUTPUT, cost_micros: COST });
    expect(await ledgerOf(gw, requestId)).toEqual([
      { kind: "hold", amount_micros: -HOLD, balance_after_micros: 0 },
      { kind: "settle", amount_micros: -EXCESS, balance_after_micros: -EXCESS },
    ]);
    expect(await account(gw, id)).toEqual({ balance_micros: -EXCESS, total_spent_micros: COST });
    const balance = await gw.fetch("/v1/balance", { headers: { authorization: `Bearer ${key}` } });
    expect((await balance.json()).balance).toBe(-EXCESS / 1e6);
    await expectBooksBalanced(gw);

    // Refused before any upstream call, and nothing more is taken.
    const next = await chat(gw, key, body(stream));
    expect(next.status).toBe(402);
    expect((await next.json()).error.type).toBe("insufficient_funds");
    expect(upstream.requests.length).toBe(1);
    const rows = await usageRows(gw, id, 2);
    expect(rows.length).toBe(2);
    expect(rows[1]).toMatchObject({ request_id: next.headers.get("x-request-id"), status: 402, cost_micros: 0 });
    expect(await ledgerOf(gw, next.headers.get("x-request-id")!)).toEqual([]);
    expect(await account(gw, id)).toEqual({ balance_micros: -EXCESS, total_spent_micros: COST });
    await expectBooksBalanced(gw);
  });
}

test("on an account far from empty the excess is charged too, and taken from the lease, which stays backed by the balance", async () => {
  upstream.setBehavior({ completion: { ...jsonFixture("openai-chat-completion.json"), usage: overUsage } });
  upstream.reset();
  const start = 1_000_000;
  const leaseSize = LeaseBook.sizeFor(HOLD, start);
  expect(leaseSize).toBeGreaterThan(COST); // the lease's free part covers the excess
  const { id, key } = await newAccount(gw, start);
  const response = await chat(gw, key, body(false));
  expect(response.status).toBe(200);
  await response.text();
  expect(await ledgerOf(gw, response.headers.get("x-request-id")!)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: start - HOLD },
    { kind: "settle", amount_micros: -EXCESS, balance_after_micros: start - COST },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: start - COST, total_spent_micros: COST });
  const lease = await gw.database.db.selectFrom("balance_leases").select("amount_micros").where("user_id", "=", id).executeTakeFirstOrThrow();
  expect(lease.amount_micros).toBe(leaseSize - COST);
  await expectBooksBalanced(gw);
});
