import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import type { TestGateway } from "../helpers/gateway.ts";
import { chat, expectBooksBalanced, newAccount, onlyUsageRowOf, startPricedLoopback } from "./_inprocess.ts";
import { EXACT_COST_MICROS, exactCostBody, sleep, waitFor } from "./_support.ts";

/**
 * Another connection holds the database's write lock for longer than the gateway's busy
 * timeout (an instance stopped in the middle of a transaction: SIGSTOP, a paused container
 * or VM; the chaos soak's stalls). What the gateway writes meanwhile fails; once the lock is
 * free it must write again, and hold no lock itself. libsql leaves a statement that failed
 * with SQLITE_BUSY unfinished (it has no reset): a connection with one never committed what
 * it wrote outside an explicit transaction, so it kept the write lock for good, and its
 * explicit transactions failed at COMMIT ("SQL statements in progress").
 */

const MODEL = "locked-model";
/** The gateway's writes wait this long for the lock here instead of 10 s, so the test does not. */
const BUSY_TIMEOUT_MS = 200;

let loopback: Awaited<ReturnType<typeof startPricedLoopback>>;
let gw: TestGateway;
let holder: OpenDatabase;

beforeAll(async () => {
  loopback = await startPricedLoopback(MODEL);
  gw = loopback.gw;
  gw.database.waitForWriteLockBetweenTurns(BUSY_TIMEOUT_MS);
  holder = openDatabase(`file:${join(gw.dir, "gateway.db")}`);
  holder.sql.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`, []);
});

afterAll(async () => {
  await holder.close();
  await loopback.close();
});

/** Runs `write` while `holder` has the write lock (it fails, or answers an error), then frees the lock. */
async function whileLocked(write: () => Promise<unknown>): Promise<void> {
  holder.sql.run("BEGIN IMMEDIATE", []);
  try {
    await write().catch(() => {});
  } finally {
    holder.sql.run("COMMIT", []);
  }
}

/** Whether another connection can take the write lock now: the gateway holds none. */
function lockIsFree(): boolean {
  try {
    holder.sql.run("BEGIN IMMEDIATE", []);
    holder.sql.run("COMMIT", []);
    return true;
  } catch {
    return false;
  }
}

type Account = Awaited<ReturnType<typeof newAccount>>;

/** A top-up: a Kysely write transaction. */
async function topUp(account: Account): Promise<number> {
  return (await gw.admin("POST", "/v1/admin/topup", { user_id: account.id, amount: 0.01 })).status;
}

/** A priced request: its hold row and its settlement, each in a write turn's transaction. */
async function request(account: Account): Promise<number> {
  const response = await chat(gw, account.key, exactCostBody(MODEL));
  await response.text();
  return response.status;
}

/**
 * What an instance writes, through Kysely's transactions or a write turn's. A statement
 * left unfinished by one way failed the next commit of the other, so after the lock the
 * other way writes first.
 */
const WRITES: { what: string; write: (account: Account) => Promise<unknown>; way: "kysely" | "turn" }[] = [
  { what: "a heartbeat", write: () => gw.services.instance.heartbeat(), way: "kysely" },
  { what: "an admin price change", write: () => gw.admin("POST", "/v1/admin/prices", { model: MODEL, input_per_million: 3, output_per_million: 15 }), way: "kysely" },
  { what: "a request's hold", write: request, way: "turn" },
];

for (const { what, write, way } of WRITES) {
  test(`${what} that waited out the busy timeout leaves the instance able to write, and holding no lock`, async () => {
    const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
    await whileLocked(() => write(account));
    const statuses = way === "kysely" ? [await request(account), await topUp(account)] : [await topUp(account), await request(account)];
    expect(statuses).toEqual([200, 200]);
    expect(lockIsFree()).toBe(true);
    expect(await gw.services.instance.heartbeat()).toBe(0);
    await expectBooksBalanced(gw);
  });
}

test("while a write waits for the lock the gateway goes on serving, reads too, and the write goes through once it is free", async () => {
  const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
  // Longer than this test needs, so the top-up waits rather than fails.
  gw.database.waitForWriteLockBetweenTurns(30_000);
  let toppedUp = false;
  holder.sql.run("BEGIN IMMEDIATE", []);
  try {
    const topUpStatus = topUp(account).finally(() => {
      toppedUp = true;
    });
    // The top-up is at its BEGIN by now: SQLite's busy handler used to hold the event loop
    // there until its timeout, and these waited for it to fail.
    await sleep(50);
    expect((await gw.fetch("/health")).status).toBe(200);
    expect((await gw.fetch("/ready")).status).toBe(200);
    expect(toppedUp).toBe(false);
    holder.sql.run("COMMIT", []);
    expect(await topUpStatus).toBe(200);
  } finally {
    if (!toppedUp) holder.sql.run("COMMIT", []);
    gw.database.waitForWriteLockBetweenTurns(BUSY_TIMEOUT_MS);
  }
  expect((await gw.admin("GET", `/v1/admin/users/${account.id}`)).body.balance).toBeCloseTo(100 * EXACT_COST_MICROS / 1e6 + 0.01, 6);
  await expectBooksBalanced(gw);
});

test("a request whose hold meets the lock is refused with a 503 to retry, and nothing is held or charged", async () => {
  const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
  let response: Response | undefined;
  await whileLocked(async () => {
    response = await chat(gw, account.key, exactCostBody(MODEL));
  });
  expect(response!.status).toBe(503);
  expect(response!.headers.get("retry-after")).toBe("1");
  expect((await response!.json()).error.type).toBe("unavailable");
  await expectBooksBalanced(gw);
  expect(await gw.database.db.selectFrom("usage_logs").selectAll().where("user_id", "=", account.id).execute()).toEqual([]);
});

/**
 * A request whose settlement meets the lock: the upstream has answered, the usage row and
 * the settlement cannot be written. They are written once the lock is free, before the
 * client gets its answer; the settlement used to be dropped with a 500, the request went
 * unrecorded and unpaid, and its hold stayed reserved (a hold row, or the draw on a lease)
 * for the life of the instance.
 */
for (const [how, holds] of [["a hold row", 100], ["a balance lease", 2_000]] as const) {
  test(`a settlement that met the lock is written once it is free (${how})`, async () => {
    const account = await newAccount(gw, holds * EXACT_COST_MICROS);
    loopback.upstream.setBehavior({ delayMs: 300 });
    try {
      const seen = loopback.upstream.requests.length;
      const pending = chat(gw, account.key, exactCostBody(MODEL));
      await waitFor("the request at the upstream", () => loopback.upstream.requests.length > seen);
      holder.sql.run("BEGIN IMMEDIATE", []);
      // Long enough for the settlement to wait out the busy timeout at least once.
      await sleep(4 * BUSY_TIMEOUT_MS + 300);
      holder.sql.run("COMMIT", []);
      const response = await pending;
      expect(response.status).toBe(200);
      const row = await onlyUsageRowOf(gw, response);
      expect(row.status).toBe(200);
      expect(row.cost_micros).toBeGreaterThan(0);
      await gw.services.holds.closeIdleLeases(0);
      expect(await gw.database.db.selectFrom("balance_leases").selectAll().execute()).toEqual([]);
    } finally {
      loopback.upstream.setBehavior({});
    }
  });
}
