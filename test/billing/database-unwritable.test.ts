import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJsonLogger } from "../../src/lib/logger.ts";
import type { TestGateway } from "../helpers/gateway.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { chat, newAccount, onlyUsageRowOf, startPricedLoopback } from "./_inprocess.ts";
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

/** The gateway's answer while it cannot write: a 503 to retry, in the spec's shape, and one log line that says why. */
async function expectUnwritableAnswer(response: Response, lines: string[]): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("30");
  expect((await response.json()).error).toEqual({ message: "The gateway cannot write to its database; retry later", type: "unavailable", code: 503 });
  const said = lines.filter((line) => line.includes("database cannot be written"));
  expect(said).toHaveLength(1);
  expect(JSON.parse(said[0]!)).toMatchObject({ level: "error", message: "database cannot be written: the database file or its folder is read-only (SQLITE_READONLY)", code: "SQLITE_READONLY" });
}

test("a request whose hold cannot be written gets a 503 to retry, the upstream is not called, and it is served once the database can be written", async () => {
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
  await expectUnwritableAnswer(response!, lines);
  expect(loopback.upstream.requests.length).toBe(calls);
  const again = await chat(gw, account.key, exactCostBody(MODEL));
  expect(again.status).toBe(200);
  expect((await onlyUsageRowOf(gw, again)).cost_micros).toBeGreaterThan(0);
});

/**
 * The upstream served this one, and its settlement is given up at once (only a busy database's
 * is tried again): unbilled, its hold row stays open until the instance stops. Reported, not
 * fixed here; this test holds the answer and the ledger's sums.
 */
test("a request whose settlement cannot be written gets a 503, not a 500, and every ledger still sums to its balance", async () => {
  const account = await newAccount(gw, 100 * EXACT_COST_MICROS);
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
  await expectUnwritableAnswer(response!, lines);
  await gw.services.usage.flush();
  expect((await checkLedger(gw.database.db)).problems).toEqual([]);
});
