import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  accountBooks,
  bearer,
  EXACT_COST_MICROS,
  exactCostBody,
  killAllSpawned,
  openReadOnly,
  PRICE_BODY,
  runDoctorCli,
  sleep,
  spawnGateway,
  waitFor,
  type GatewayProcess,
} from "./_support.ts";

/**
 * A real gateway process is killed with SIGKILL under a steady load, then a new process starts
 * on the same database file. A response the client received in full as a success had its
 * usage row (and settlement) committed before its end was sent, so it must be in the file;
 * holds and balance leases of the killed process are released by the restart (same host, its
 * pid is not running). The load runs on an account far from empty, whose holds are drawn on a
 * lease; the slow requests on one with little left, whose holds are rows of their own.
 */

const MODEL = "m1";
const SLOW_MODEL = "slow-model";
const SLOW_REQUESTS = 20;
const LOOPS = 50;
const BALANCE_USD = 100;

let dir: string;
/**
 * An upstream that never answers until released: requests to SLOW_MODEL are certainly
 * in flight, with their funds held, when the gateway is killed (the hold precedes the call).
 */
let slowUpstream: ReturnType<typeof Bun.serve>;
let releaseSlow: () => void = () => {};
const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));
let slowReceived = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "billing-sigkill-"));
  slowUpstream = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      await req.text();
      slowReceived++;
      await Promise.race([slowReleased, sleep(10_000)]);
      return new Response("released", { status: 503 });
    },
  });
});

afterAll(async () => {
  releaseSlow();
  await killAllSpawned();
  await slowUpstream?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

interface Success {
  requestId: string;
  responseId: string;
}

test("SIGKILL under load, then restart: every success has its usage row, no hold is left, the doctor passes", async () => {
  const first: GatewayProcess = await spawnGateway(dir);
  expect((await first.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: [MODEL] })).status).toBe(201);
  expect((await first.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
  expect((await first.admin("POST", "/v1/admin/channels", { name: "slow", type: "openai", base_url: `http://127.0.0.1:${slowUpstream.port}/v1`, models: [SLOW_MODEL] })).status).toBe(201);
  expect((await first.admin("POST", "/v1/admin/prices", { model: SLOW_MODEL, ...PRICE_BODY })).status).toBe(200);
  const user = await first.admin("POST", "/v1/admin/users", { email: "sigkill@example.test", plan: "enterprise", balance: BALANCE_USD });
  expect(user.status).toBe(201);
  const userId = user.body.id as string;
  const token = await first.admin("POST", "/v1/admin/tokens", { user_id: userId, name: "load" });
  const key = token.body.key as string;
  await waitFor("the key", async () => (await first.fetch("/v1/balance", { headers: bearer(key) })).status === 200);
  // Twice what the slow requests hold: far too little for a lease.
  const slowBalanceMicros = 2 * SLOW_REQUESTS * EXACT_COST_MICROS;
  const slowUser = await first.admin("POST", "/v1/admin/users", { email: "sigkill-slow@example.test", plan: "enterprise", balance: slowBalanceMicros / 1e6 });
  const slowUserId = slowUser.body.id as string;
  const slowKey = (await first.admin("POST", "/v1/admin/tokens", { user_id: slowUserId, name: "slow" })).body.key as string;

  const successes: Success[] = [];
  let failures = 0;
  let stop = false;
  /**
   * Once armed, the kill is sent synchronously on the receipt of a complete success: the most
   * demanding moment, when a usage row written after (instead of before) the end of the
   * response would still be uncommitted.
   */
  let armed = false;
  let killSent = false;
  const body = JSON.stringify(exactCostBody(MODEL));
  const loop = async () => {
    while (!stop) {
      try {
        const response = await first.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body });
        const text = await response.text();
        if (response.status !== 200) {
          failures++;
          continue;
        }
        // Only a complete, parseable body counts as a success the client saw.
        const json = JSON.parse(text);
        if (json.object !== "chat.completion" || typeof json.choices?.[0]?.message?.content !== "string") throw new Error("incomplete body");
        successes.push({ requestId: response.headers.get("x-request-id") ?? "", responseId: json.id });
        if (armed && !killSent) {
          killSent = true;
          first.proc.kill("SIGKILL");
        }
      } catch {
        failures++;
        if (first.proc.exitCode !== null || first.proc.signalCode !== null) return;
        await sleep(5);
      }
    }
  };
  const loops = Array.from({ length: LOOPS }, loop);
  // Load for a while (at least 400 ms and 200 successes, at most 2 s), then kill mid-load.
  const loadStart = Date.now();
  await waitFor("some successes under load", () => successes.length >= 200 && Date.now() - loadStart >= 400, 2_000).catch(() => {});
  // Plus requests certainly held and in flight at the kill.
  const slow = Array.from({ length: SLOW_REQUESTS }, () =>
    first.fetch("/v1/chat/completions", { method: "POST", headers: bearer(slowKey), body: JSON.stringify(exactCostBody(SLOW_MODEL)) }).then(
      (r) => r.status,
      () => "connection lost",
    ),
  );
  await waitFor("the slow requests at the upstream", () => slowReceived >= SLOW_REQUESTS, 3_000);
  const failuresBeforeKill = failures;
  armed = true;
  await waitFor("the kill on a success", () => killSent, 3_000);
  const beforeKill = successes.length;
  await first.proc.exited;
  expect(first.proc.signalCode).toBe("SIGKILL");
  // Nothing answers any more: the loops end on connection errors (bounded by the stop flag).
  const settled = await Promise.race([Promise.all(loops).then(() => true), sleep(5_000).then(() => false)]);
  stop = true;
  if (!settled) await Promise.all(loops);
  // The slow requests never got an answer: the process died with them.
  expect(await Promise.all(slow)).toEqual(Array(SLOW_REQUESTS).fill("connection lost"));
  console.log(`sigkill: ${successes.length} successes (${beforeKill} when the kill was sent), ${failures} failed calls (${failuresBeforeKill} before the kill)`);
  expect(successes.length).toBeGreaterThan(0);
  expect(failuresBeforeKill).toBe(0);
  for (const s of successes) expect(s.requestId).toMatch(/^req_/);

  // The killed process left the slow requests' holds, the load account's lease (if open) and its instance record.
  let holdsLeftByKill: number;
  {
    const db = openReadOnly(dir);
    try {
      holdsLeftByKill = accountBooks(db, slowUserId).openHolds;
      expect(accountBooks(db, userId).openHolds).toBe(0);
      // At most the load account's lease: one idle for LEASE_IDLE_MS (a pause of the loops on a
      // busy machine) was closed before the kill, which is as good for what follows.
      const leases = db.query("select user_id from balance_leases").all();
      expect(leases.length).toBeLessThanOrEqual(1);
      for (const lease of leases) expect(lease).toEqual({ user_id: userId });
      const instances = db.query("select pid from instances").all() as { pid: number }[];
      expect(instances.map((i) => i.pid)).toContain(first.pid);
    } finally {
      db.close();
    }
  }
  console.log(`sigkill: ${holdsLeftByKill} holds left open by the killed process`);
  expect(holdsLeftByKill).toBe(SLOW_REQUESTS);

  // Restart on the same database: at start it sees the dead pid on this host and refunds its holds.
  const second = await spawnGateway(dir);
  {
    const db = openReadOnly(dir);
    try {
      const books = accountBooks(db, userId);
      expect(books.openHolds).toBe(0);
      expect(books.ledgerSum).toBe(books.balance);
      expect(books.balance).toBe(BALANCE_USD * 1e6 - books.spent);
      expect(db.query("select count(*) as n from balance_leases").get()).toEqual({ n: 0 });
      // The slow requests cost nothing: their holds were refunded in full.
      const slowBooks = accountBooks(db, slowUserId);
      expect(slowBooks).toMatchObject({ openHolds: 0, balance: slowBalanceMicros, ledgerSum: slowBalanceMicros, spent: 0 });
      const slowRefs = db.query("select reference, group_concat(kind) as kinds from ledger where user_id = ? and kind != 'topup' group by reference").all(slowUserId) as { kinds: string }[];
      expect(slowRefs.map((r) => r.kinds.split(",").sort().join("+"))).toEqual(Array(SLOW_REQUESTS).fill("hold+refund"));
      const instances = db.query("select pid from instances").all() as { pid: number }[];
      expect(instances.map((i) => i.pid)).toEqual([second.pid]);
      // Every success the client saw has its usage row, with its cost charged.
      const rows = new Map(
        (db.query("select request_id, status, cost_micros from usage_logs where user_id = ?").all(userId) as { request_id: string; status: number; cost_micros: number }[]).map((r) => [r.request_id, r]),
      );
      const missing = successes.filter((s) => !rows.has(s.requestId));
      expect(missing).toEqual([]);
      for (const s of successes) expect(rows.get(s.requestId)).toMatchObject({ status: 200, cost_micros: EXACT_COST_MICROS });
      // Every request that finished has its hold and its settlement in the ledger, once; those
      // drawn on the lease and cut off by the kill never reached it, and cost nothing.
      const perRef = db.query("select reference, group_concat(kind) as kinds from ledger where user_id = ? and kind != 'topup' group by reference").all(userId) as { reference: string; kinds: string }[];
      const shapes = new Map<string, number>();
      for (const r of perRef) {
        const shape = r.kinds.split(",").sort().join("+");
        shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
      }
      expect([...shapes.keys()]).toEqual(["hold+settle"]);
      expect(shapes.get("hold+settle")).toBe(rows.size);
      for (const s of successes) expect(perRef.find((r) => r.reference === s.requestId)?.kinds.split(",").sort()).toEqual(["hold", "settle"]);
    } finally {
      db.close();
    }
  }

  // The account keeps working after the restart.
  const again = await second.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body });
  expect(again.status).toBe(200);
  await again.text();
  expect(await second.stop()).toBe(0);

  const doctor = await runDoctorCli(dir);
  // "0 orphaned holds released": the restart had already released them, not the doctor.
  expect(doctor.stdout).toMatch(/\b0 ledger mismatches; 0 open holds; 0 open balance leases; 0 orphaned holds released\b/);
  expect(doctor.code).toBe(0);
}, 45_000);
