import { expect, test } from "bun:test";
import {
  accountBooks,
  bearer,
  EXACT_COST_MICROS,
  exactCostBody,
  openReadOnly,
  PRICE_BODY,
  processPairEachTest,
  runDoctorCli,
  waitUntilServing,
} from "./_support.ts";
import { LeaseBook } from "../../src/billing/lease-book.ts";

/**
 * Two real gateway processes (`bun src/runtime/bun.ts`) share one database file. Requests,
 * half to each, are released together against one account whose balance covers exactly N of
 * them. Holds are taken in BEGIN IMMEDIATE transactions, or drawn on a balance lease that such
 * a transaction reserved, so across processes exactly N are granted and the rest are refused
 * with 402 before any upstream call: with N = 137 each hold is a row of its own; with N = 1,500
 * the account starts far enough from empty for leases, and the processes must hand back what
 * their leases hold before either refuses anyone.
 */

const MODEL = "m1";

const pair = processPairEachTest("billing-two-processes-");

for (const [N, TOTAL, leased] of [[137, 1000, false], [1500, 2400, true]] as const) {
  test(`${TOTAL} requests over two processes sharing a database: exactly ${N} succeed, the rest get 402, books balance (${leased ? "leases" : "hold rows"})`, async () => {
    const { dir, a, b } = pair;
    // Admin set-up through process A; B learns of it through the change feed.
    const channel = await a.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: [MODEL] });
    expect(channel.status).toBe(201);
    const price = await a.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY });
    expect(price.status).toBe(200);
    expect(EXACT_COST_MICROS).toBe(123); // 16 prompt tokens x 3 + 5 output tokens x 15
    expect(LeaseBook.sizeFor(EXACT_COST_MICROS, N * EXACT_COST_MICROS) > 0).toBe(leased);
    const user = await a.admin("POST", "/v1/admin/users", { email: "two-processes@example.test", plan: "enterprise", balance: (N * EXACT_COST_MICROS) / 1e6 });
    expect(user.status).toBe(201);
    const userId = user.body.id as string;
    const token = await a.admin("POST", "/v1/admin/tokens", { user_id: userId, name: "load" });
    expect(token.status).toBe(201);
    const key = token.body.key as string;

    // Both processes must know the channel, the price and the key before the burst.
    for (const gw of [a, b]) await waitUntilServing(gw, MODEL, key);

    // Released together: every request is in flight before any answer is awaited.
    const body = JSON.stringify(exactCostBody(MODEL));
    const results = await Promise.all(
      Array.from({ length: TOTAL }, async (_, i) => {
        const gw = i % 2 === 0 ? a : b;
        const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body });
        const json = await response.json();
        return { status: response.status, json, instance: gw === a ? "a" : "b" };
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    console.log(`two processes: 200 from a=${ok.filter((r) => r.instance === "a").length}, b=${ok.filter((r) => r.instance === "b").length}`);
    expect(ok.length).toBe(N);
    expect(refused.length).toBe(TOTAL - N);
    for (const r of ok) expect(r.json.choices[0].message.content.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.json.error.type).toBe("insufficient_funds");

    const after = await b.admin("GET", `/v1/admin/users/${userId}`);
    expect(after.body.balance).toBe(0);
    expect(Math.round(after.body.total_usage * 1e6)).toBe(N * EXACT_COST_MICROS);
    const usage = await a.admin("GET", `/v1/admin/usage?user_id=${userId}&limit=1`);
    expect(usage.body.total).toBe(TOTAL);

    // Clean stops: both drain, flush and retire.
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);

    const db = openReadOnly(dir);
    try {
      const books = accountBooks(db, userId);
      expect(books.balance).toBe(0);
      expect(books.ledgerSum).toBe(books.balance);
      expect(books.minBalanceAfter).toBeGreaterThanOrEqual(0); // never below zero, at any ledger row
      expect(books.openHolds).toBe(0);
      const rows = db.query("select status, count(*) as n, sum(cost_micros) as cost from usage_logs where user_id = ? group by status order by status").all(userId);
      expect(rows).toEqual([
        { status: 200, n: N, cost: N * EXACT_COST_MICROS },
        { status: 402, n: TOTAL - N, cost: 0 },
      ]);
      const kinds = db.query("select kind, count(*) as n, sum(amount_micros) as amount from ledger where user_id = ? group by kind order by kind").all(userId);
      // The top-up at creation, one hold per admitted request, one settlement each (exact cost: 0 back).
      expect(kinds).toEqual([
        { kind: "hold", n: N, amount: -N * EXACT_COST_MICROS },
        { kind: "settle", n: N, amount: 0 },
        { kind: "topup", n: 1, amount: N * EXACT_COST_MICROS },
      ]);
      expect((db.query("select count(*) as n from instances").get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }

    const doctor = await runDoctorCli(dir);
    expect(doctor.stdout).toMatch(/\b0 ledger mismatches; 0 open holds; 0 open balance leases\b/);
    expect(doctor.code).toBe(0);
  }, 45_000);
}
