import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJsonLogger } from "../../src/lib/logger.ts";
import type { TestGateway } from "../helpers/gateway.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { chat, newAccount, startPricedLoopback } from "./_inprocess.ts";
import { EXACT_COST_MICROS, exactCostBody, waitFor } from "./_support.ts";

/**
 * The machine will not let the gateway write its database: a full disk (SQLITE_FULL), a file
 * or folder made read-only (SQLITE_READONLY), an I/O error. Nothing is written, as when
 * another process holds the lock, and it lasts until the operator acts. Callers were told
 * 500 "The gateway failed to handle this request", and the log said only "unhandled error".
 * SQLite's `query_only` mode fails every write of the gateway's connection with
 * SQLITE_READONLY, as a read-only file does (seen on a full tmpfs too, with SQLITE_FULL).
 */

const MODEL = "unwritable-model";

let loopback: Awaited<ReturnType<typeof startPricedLoopback>>;
let gw: TestGateway;
const logLines: string[] = [];

beforeAll(async () => {
  loopback = await startPricedLoopback(MODEL, undefined, createJsonLogger((line) => logLines.push(line), Date.now));
  gw = loopback.gw;
});

afterAll(() => loopback.close());

/** Makes every write of the gateway's connection fail as a read-only database's would, or lets them through again. */
function readOnly(on: boolean): void {
  gw.database.sql.run(`PRAGMA query_only = ${on ? 1 : 0}`, []);
}

/** The log lines written while `run` ran. */
async function loggedDuring(run: () => Promise<void>): Promise<string[]> {
  const from = logLines.length;
  await run();
  return logLines.slice(from);
}

/** The gateway's answer while it cannot write: a 503 to retry, in the spec's shape. */
async function expectUnwritableAnswer(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("30");
  expect((await response.json()).error).toEqual({ message: "The gateway cannot write to its database; retry later", type: "unavailable", code: 503 });
}

/** The one error line of an outage, which names the cause and that requests are refused. */
function expectOutageLogged(lines: string[]): void {
  const said = lines.filter((line) => JSON.parse(line).level === "error" && line.includes("database cannot be written"));
  expect(said).toHaveLength(1);
  expect(JSON.parse(said[0]!)).toMatchObject({
    message: "database cannot be written: the database file or its folder is read-only (SQLITE_READONLY); model requests are refused until a write goes through",
    code: "SQLITE_READONLY",
  });
}

/**
 * While shut, a request is refused before the upstream, even one whose funds a balance lease
 * holds in memory: served, it could not be billed. The next heartbeat that goes through opens it.
 */
async function expectShutUntilHeartbeat(key: string): Promise<void> {
  const calls = loopback.upstream.requests.length;
  await expectUnwritableAnswer(await chat(gw, key, exactCostBody(MODEL)));
  expect(loopback.upstream.requests.length).toBe(calls);
  await gw.services.instance.heartbeat();
  const served = await chat(gw, key, exactCostBody(MODEL));
  expect(served.status).toBe(200);
  const row = gw.database.sql.get<{ cost_micros: number }>("SELECT cost_micros FROM usage_logs WHERE request_id = ?", [served.headers.get("x-request-id")]);
  expect(row?.cost_micros).toBeGreaterThan(0);
}

test("a request whose hold cannot be written gets a 503 to retry, the upstream is not called, and requests are served again after a heartbeat goes through", async () => {
  const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
  const calls = loopback.upstream.requests.length;
  let response: Response | undefined;
  readOnly(true);
  const lines = await loggedDuring(async () => {
    try {
      response = await chat(gw, account.key, exactCostBody(MODEL));
    } finally {
      readOnly(false);
    }
  });
  await expectUnwritableAnswer(response!);
  expectOutageLogged(lines);
  expect(loopback.upstream.requests.length).toBe(calls);
  await expectShutUntilHeartbeat(account.key);
});

/**
 * The upstream served this one, and its settlement is given up at once (only a busy database's
 * is tried again): unbilled, its hold row stays open until the instance stops. What the latch
 * stops is the next ones: the account's balance lease would have let them reach the upstream.
 */
test("a request whose settlement cannot be written gets a 503, not a 500, every ledger still sums to its balance, and the next request on the account's lease is refused before the upstream", async () => {
  // Enough for a balance lease: the holds that follow are drawn on it in memory.
  const account = await newAccount(gw, 2_000 * EXACT_COST_MICROS);
  expect((await chat(gw, account.key, exactCostBody(MODEL))).status).toBe(200);
  expect(gw.database.sql.get<{ open: number }>("SELECT open FROM balance_leases WHERE user_id = ?", [account.id])?.open).toBe(1);
  loopback.upstream.setBehavior({ delayMs: 200 });
  let response: Response | undefined;
  const lines = await loggedDuring(async () => {
    try {
      const calls = loopback.upstream.requests.length;
      const pending = chat(gw, account.key, exactCostBody(MODEL));
      await waitFor("the request at the upstream", () => loopback.upstream.requests.length > calls);
      readOnly(true);
      response = await pending;
    } finally {
      readOnly(false);
      loopback.upstream.setBehavior({});
    }
  });
  await expectUnwritableAnswer(response!);
  expectOutageLogged(lines);
  await gw.services.usage.flush();
  const books = await checkLedger(gw.database.db);
  expect(books.problems).toEqual([]);
  expect(books.openHolds).toBe(0);
  await expectShutUntilHeartbeat(account.key);
});

test("a stream whose usage row cannot be committed ends with the format's error event, a 503, not a cut connection", async () => {
  const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
  // Chunks 50 ms apart: the database is made read-only after the first, before the end.
  loopback.upstream.setBehavior({ chunkDelayMs: 50 });
  const response = await chat(gw, account.key, { ...exactCostBody(MODEL), stream: true });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  readOnly(true);
  loopback.upstream.setBehavior({});
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    readOnly(false);
  }
  const events = text.split("\n\n").filter((event) => event.startsWith("data: ")).map((event) => event.slice("data: ".length));
  expect(events.at(-1)).not.toBe("[DONE]");
  expect(JSON.parse(events.at(-1)!).error).toMatchObject({ message: "The gateway could not record this answer, so it does not count; retry later", code: 503 });
  await gw.services.instance.heartbeat();
});
