/**
 * Benchmark: what one rate-limit exchange (src/limits/rate-exchange.ts) costs with many active
 * buckets, and how long it holds the event loop, on which it runs beside the requests.
 *
 *   bun scripts/bench-rate-exchange.ts [--buckets 10000,100000] [--runs 20] [--active 1]
 *
 * For each count, two instances (each its own limiter, exchange and connection, as two
 * processes have) share a new database file in a temp folder, and each first serves every
 * bucket once. Before every timed run both admit one request on the `active` share of the
 * buckets and `b` exchanges, so `a`'s exchange writes a row for each of those and reads that
 * many rewritten rows of `b`'s, among all of b's rows. The default, every account active in every
 * poll interval, is the worst steady state. Prints, per count, p50 and max of `a`'s exchange
 * over the runs, and p50 and max of the longest stretch the event loop went without a turn
 * while it ran (the exchange runs on the thread that serves requests).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Principal } from "../src/auth/key-cache.ts";
import { migrate } from "../src/db/migrate.ts";
import { openDatabase, type OpenDatabase } from "../src/db/open-database.ts";
import { RateExchange } from "../src/limits/rate-exchange.ts";
import { RateLimiter, type Limits } from "../src/limits/rate-limiter.ts";
import { principal } from "../test/limits/_support.ts";

/** Limits high enough that the runs never refuse a request. */
const LIMITS: Limits = { requestsPerMinute: 1_000_000, tokensPerMinute: 100_000_000 };

interface Instance {
  database: OpenDatabase;
  limiter: RateLimiter;
  exchange: RateExchange;
}

function readOptions(): { buckets: number[]; runs: number; active: number } {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { buckets: { type: "string", default: "10000,100000" }, runs: { type: "string", default: "20" }, active: { type: "string", default: "1" } },
  });
  return { buckets: values.buckets.split(",").map(Number), runs: Number(values.runs), active: Number(values.active) };
}

async function openInstance(path: string, id: string): Promise<Instance> {
  const database = openDatabase(`file:${path}`);
  await migrate(database.db, Date.now);
  const limiter = new RateLimiter(Date.now);
  const exchange = new RateExchange(database.db, limiter, { id, alone: false }, Date.now);
  return { database, limiter, exchange };
}

/** One request admitted and settled on every bucket. */
function admitEach(instance: Instance, principals: readonly Principal[]): void {
  for (const principal of principals) instance.limiter.admit(principal, LIMITS, 100).settle(60);
}

/**
 * Runs `work` while a chain of zero-delay timers notes every event-loop turn; returns how
 * long `work` took and the longest time between two turns (the loop held by synchronous work).
 */
async function timeWithLoopWatch(work: () => Promise<void>): Promise<{ ms: number; blockedMs: number }> {
  let last = performance.now();
  let blockedMs = 0;
  let watching = true;
  const tick = () => {
    const at = performance.now();
    blockedMs = Math.max(blockedMs, at - last);
    last = at;
    if (watching) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const start = performance.now();
  last = start;
  blockedMs = 0;
  await work();
  const ms = performance.now() - start;
  // The turn right after the work ends the stretch it held.
  await new Promise((resolve) => setTimeout(resolve, 0));
  watching = false;
  return { ms, blockedMs };
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function benchBuckets(count: number, runs: number, activeShare: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-rate-exchange-"));
  const path = join(dir, "gateway.db");
  try {
    const a = await openInstance(path, "inst_bench_a");
    const b = await openInstance(path, "inst_bench_b");
    const principals = Array.from({ length: count }, (_, i) => principal(`u${i}`));
    const active = principals.slice(0, Math.round(count * activeShare));
    // Both read each other's rows once, so every later run reads only the rows rewritten since.
    for (const instance of [a, b, a]) {
      admitEach(instance, principals);
      await instance.exchange.run();
    }
    const times: number[] = [];
    const blocks: number[] = [];
    for (let run = 0; run < runs; run++) {
      admitEach(b, active);
      await b.exchange.run();
      admitEach(a, active);
      const { ms, blockedMs } = await timeWithLoopWatch(() => a.exchange.run());
      times.push(ms);
      blocks.push(blockedMs);
    }
    times.sort((x, y) => x - y);
    blocks.sort((x, y) => x - y);
    const f = (ms: number) => ms.toFixed(1).padStart(8);
    console.log(
      `${String(count).padStart(7)} buckets | exchange p50 ${f(percentile(times, 0.5))} ms  max ${f(times.at(-1)!)} ms | loop blocked p50 ${f(percentile(blocks, 0.5))} ms  max ${f(blocks.at(-1)!)} ms`,
    );
    await a.database.close();
    await b.database.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const options = readOptions();
console.log(`one exchange of instance a (write its rows, read b's), ${options.runs} runs each, ${options.active * 100}% of the buckets active`);
for (const count of options.buckets) await benchBuckets(count, options.runs, options.active);
