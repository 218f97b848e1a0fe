import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { LEASE_IDLE_MS, LeaseBook } from "../../src/billing/lease-book.ts";
import { account, chat, expectBooksBalanced, ledgerOf, newAccount } from "./_inprocess.ts";
import { EXACT_COST_MICROS, exactCostBody, PRICE_BODY, sleep } from "./_support.ts";

/**
 * Balance leases (src/billing/lease-book.ts) in one process: an account far from empty has its
 * holds drawn on a lease in memory, and the books read exactly as with a hold row per request.
 * The same across two processes is in two-processes.test.ts.
 */

const MODEL = "lease-model";
const HOLD = EXACT_COST_MICROS;

/** A strictly priced in-process gateway serving MODEL through the mock at PRICE_BODY. */
async function startLeaseGateway(now?: () => number): Promise<TestGateway> {
  const started = await startTestGateway({ strictPricing: true, now });
  expect((await started.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: [MODEL] })).status).toBe(201);
  expect((await started.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
  return started;
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startLeaseGateway();
});
afterAll(() => gw.close());

function leaseRows(userId: string, of = gw) {
  return of.database.db.selectFrom("balance_leases").select(["amount_micros", "open"]).where("user_id", "=", userId).orderBy("instance_id").execute();
}

test("a request on an account far from empty draws on a lease; its hold and settlement reach the ledger as with a hold row", async () => {
  const start = 1_000_000;
  const size = LeaseBook.sizeFor(HOLD, start);
  expect(size).toBe(256 * HOLD); // far from empty: a lease of 256 holds
  const { id, key } = await newAccount(gw, start);

  const response = await chat(gw, key, exactCostBody(MODEL));
  expect(response.status).toBe(200);
  await response.text();
  const requestId = response.headers.get("x-request-id")!;

  expect(await ledgerOf(gw, requestId)).toEqual([
    { kind: "hold", amount_micros: -HOLD, balance_after_micros: start - HOLD },
    { kind: "settle", amount_micros: 0, balance_after_micros: start - HOLD },
  ]);
  expect(await account(gw, id)).toEqual({ balance_micros: start - HOLD, total_spent_micros: HOLD });
  // The lease keeps the rest of what it reserved; no hold row was written.
  expect(await leaseRows(id)).toEqual([{ amount_micros: size - HOLD, open: 1 }]);
  await expectBooksBalanced(gw);
  const balance = await gw.fetch("/v1/balance", { headers: { authorization: `Bearer ${key}` } });
  expect((await balance.json()).balance).toBe((start - HOLD) / 1e6);

  // Idle, the lease closes and its row goes; no money moves.
  await sleep(LEASE_IDLE_MS + 50);
  await gw.services.holds.closeIdleLeases();
  expect(await leaseRows(id)).toEqual([]);
  expect(await account(gw, id)).toEqual({ balance_micros: start - HOLD, total_spent_micros: HOLD });
  expect((await checkLedger(gw.database.db)).openLeases).toBe(0);
});

test("2,000 requests released together against a balance covering exactly 1,500, enough for leases: 1,500 succeed", async () => {
  const n = 1500;
  expect(LeaseBook.sizeFor(HOLD, n * HOLD)).toBeGreaterThan(0);
  const { id, key } = await newAccount(gw, n * HOLD);
  const statuses = await Promise.all(
    Array.from({ length: 2000 }, () =>
      chat(gw, key, exactCostBody(MODEL)).then(async (r) => {
        const json = await r.json();
        if (r.status === 402) expect(json.error.type).toBe("insufficient_funds");
        return r.status;
      }),
    ),
  );
  expect(statuses.filter((s) => s === 200).length).toBe(n);
  expect(statuses.filter((s) => s === 402).length).toBe(2000 - n);
  expect(await account(gw, id)).toEqual({ balance_micros: 0, total_spent_micros: n * HOLD });
  // Every success has its hold and settlement; the lease gave everything back on its way out.
  const kinds = await gw.database.db
    .selectFrom("ledger")
    .select(["kind", (eb) => eb.fn.countAll<number>().as("n"), (eb) => eb.fn.sum<number>("amount_micros").as("amount")])
    .where("user_id", "=", id)
    .groupBy("kind")
    .orderBy("kind")
    .execute();
  expect(kinds).toEqual([
    { kind: "hold", n, amount: -n * HOLD },
    { kind: "settle", n, amount: 0 },
    { kind: "topup", n: 1, amount: n * HOLD },
  ]);
  const minAfter = await gw.database.db.selectFrom("ledger").select((eb) => eb.fn.min<number>("balance_after_micros").as("min")).where("user_id", "=", id).executeTakeFirstOrThrow();
  expect(minAfter.min).toBe(0);
  expect(await leaseRows(id)).toEqual([]);
  await expectBooksBalanced(gw);
}, 30_000);

test("an instance another one took for dead registers again and forgets its dropped leases instead of drawing on them", async () => {
  const start = 1_000_000;
  const size = LeaseBook.sizeFor(HOLD, start);
  const { id, key } = await newAccount(gw, start);
  const first = await chat(gw, key, exactCostBody(MODEL));
  expect(first.status).toBe(200);
  await first.text();
  expect(await leaseRows(id)).toEqual([{ amount_micros: size - HOLD, open: 1 }]);
  // What another instance's recovery does to one whose heartbeat went stale.
  const instanceId = gw.services.instance.id;
  await gw.database.db.deleteFrom("balance_leases").where("instance_id", "=", instanceId).execute();
  await gw.database.db.deleteFrom("instances").where("id", "=", instanceId).execute();

  await gw.services.instance.heartbeat();
  const registered = await gw.database.db.selectFrom("instances").select("id").where("id", "=", instanceId).execute();
  expect(registered).toEqual([{ id: instanceId }]);
  // The next hold is decided in the database again: a new lease, backed by the balance.
  const second = await chat(gw, key, exactCostBody(MODEL));
  expect(second.status).toBe(200);
  await second.text();
  expect(await leaseRows(id)).toEqual([{ amount_micros: LeaseBook.sizeFor(HOLD, start - HOLD) - HOLD, open: 1 }]);
  expect(await account(gw, id)).toEqual({ balance_micros: start - 2 * HOLD, total_spent_micros: 2 * HOLD });
  await expectBooksBalanced(gw);
});

test("a hold above the whole balance is refused at once: it neither waits for another instance's open lease nor closes this one's, since no lease closing could cover it", async () => {
  // A clock that stands still: a hold that waited for the other instance's lease to close would wait for ever.
  const frozen = Date.now();
  const still = await startLeaseGateway(() => frozen);
  try {
    const start = 1_000_000;
    const { id, key } = await newAccount(still, start);
    const first = await chat(still, key, exactCostBody(MODEL));
    expect(first.status).toBe(200);
    await first.text();
    // Another instance drawing on a lease of the same account, as its row reads.
    await still.database.db.insertInto("balance_leases").values({ user_id: id, instance_id: "another-instance", amount_micros: HOLD, open: 1, updated_at: frozen }).execute();
    const leases = await leaseRows(id, still);

    // 1,000,000 output tokens at 15 micro-USD: a 15 USD hold on an account of 1 USD, leases included.
    const refused = await chat(still, key, { ...exactCostBody(MODEL), max_tokens: 1_000_000 });
    expect(refused.status).toBe(402);
    expect((await refused.json()).error.type).toBe("insufficient_funds");
    expect(await leaseRows(id, still)).toEqual(leases);
    // This instance's lease still grants the next request in memory.
    const next = await chat(still, key, exactCostBody(MODEL));
    expect(next.status).toBe(200);
    await next.text();
    expect(await account(still, id)).toEqual({ balance_micros: start - 2 * HOLD, total_spent_micros: 2 * HOLD });
  } finally {
    await still.close();
  }
});
