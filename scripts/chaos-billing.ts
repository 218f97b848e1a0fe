/**
 * A crash-and-chaos soak of billing across gateway instances sharing one database file.
 *
 *   bun scripts/chaos-billing.ts [--seconds 120] [--seed N] [--instances 3] [--concurrency 16] [--cycle 25] [--keep]
 *
 * Starts loopback upstreams of each kind (openai, anthropic, gemini, and an OpenAI-style
 * media server; the test helpers) and `--instances` gateway processes (`bun
 * src/runtime/bun.ts`) on one database file, sets up accounts from rich (balance leases) to
 * nearly empty (402s) and keys on a rate-limited plan (429s), then runs cycles. In a cycle
 * `--concurrency` clients send chat in all three caller formats (streamed or not) to every
 * upstream kind, embeddings, images and speech, hanging up at random points, while an
 * operator posts top-ups (with and without Idempotency-Key, some sent again with the same key
 * to another instance) and price changes. Every 2-5 s an instance is killed with SIGKILL
 * (sometimes while a top-up or a price change is in flight, at the receipt of a whole
 * success, or while it shuts down) or stopped with SIGTERM, and a new one started; once, all
 * are killed at once; every other cycle one is stopped (SIGSTOP) for longer than the registry
 * takes to find it dead, then resumed, or the database's write lock is held for longer than
 * the instances' busy timeout, as by an instance stopped inside a transaction. At the end of each cycle the traffic stops, a live
 * instance's registry pass is awaited, and scripts/chaos/invariants.ts holds the database to
 * what the clients saw; at the end, with every instance stopped, once more.
 *
 * Traffic goes to 127.0.0.1 only. The soak stops by itself after about `--seconds` (a
 * watchdog kills everything a minute later). Exit code 1 when an invariant broke; the folder
 * of the database is then kept for a look (and with --keep).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stopSpawnedOnOverrun } from "./chaos/watchdog.ts";
import { sleep } from "../test/helpers/common.ts";
import { Fleet } from "./chaos/fleet.ts";
import { Random } from "./chaos/random.ts";
import { Observations } from "./chaos/observations.ts";
import { runClients, type TrafficHooks } from "./chaos/traffic.ts";
import { Operator } from "./chaos/admin-traffic.ts";
import { checkInvariants } from "./chaos/invariants.ts";
import { buildWorld, CHAT_MODELS, CHAT_PRICES, closeUpstreams, startUpstreams, trimUpstreams, waitUntilReady, type Account } from "./chaos/world.ts";
import { runChaos } from "./chaos/chaos-actions.ts";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "120" },
    seed: { type: "string" },
    instances: { type: "string", default: "3" },
    concurrency: { type: "string", default: "16" },
    cycle: { type: "string", default: "25" },
    keep: { type: "boolean", default: false },
  },
});
const seconds = Number(args.seconds);
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const instances = Math.max(2, Number(args.instances));
const concurrency = Number(args.concurrency);
const cycleMs = Number(args.cycle) * 1_000;
/** Left at the end for the last stop and check. */
const FINAL_RESERVE_MS = 20_000;
/** A live instance's heartbeat (and its registry pass) comes every 5 s. */
const REGISTRY_PASS_MS = 5_500;

const startedAt = Date.now();
const deadline = startedAt + seconds * 1_000;
const disarmWatchdog = stopSpawnedOnOverrun("chaos", seconds * 1_000 + 60_000);

const random = new Random(seed);
const dir = mkdtempSync(join(tmpdir(), "chaos-billing-"));
const observations = new Observations();
const upstreams = await startUpstreams();
const fleet = new Fleet(dir, {});
console.log(`chaos: seed ${seed}, ${seconds} s, ${instances} instances, concurrency ${concurrency}, database ${dir}`);

const first = await fleet.start();
const accounts: Account[] = await buildWorld(first, upstreams);
for (const model of CHAT_MODELS) observations.notePrice(model, CHAT_PRICES[0]);
while (fleet.live.length < instances) await fleet.start();
for (const gw of fleet.live) await waitUntilReady(gw, accounts);

const operator = new Operator(fleet, accounts, random, observations, String(seed));
let violations = 0;
let checked = 0;
let cycles = 0;
let killedAll = false;
const report = (label: string, outcome: { checked: number; violations: string[] }) => {
  checked += outcome.checked;
  violations += outcome.violations.length;
  console.log(`chaos: ${label}: ${outcome.checked} facts checked, ${outcome.violations.length} violations`);
  for (const v of outcome.violations.slice(0, 40)) console.log(`  VIOLATION ${v}`);
};

while (Date.now() + 5_000 < deadline - FINAL_RESERVE_MS) {
  cycles++;
  const cycleEnd = Math.min(Date.now() + cycleMs, deadline - FINAL_RESERVE_MS);
  let stopped = false;
  const stop = () => stopped;
  const hooks: TrafficHooks = {};
  const traffic = Promise.all([runClients(concurrency, stop, fleet, accounts, random, observations, hooks), operator.run(stop)]);
  // Once in the soak, past 40% of it, every instance at once.
  const killAll: boolean = !killedAll && Date.now() - startedAt > 0.4 * seconds * 1_000;
  killedAll ||= killAll;
  // Every other cycle, from the second on, a stall: a SIGSTOP takes 21 s, a third of a default soak.
  const stall = cycles % 2 === 1 ? null : cycles % 4 === 2 ? "sigstop" : "lock";
  const actions = await runChaos({ fleet, operator, random, hooks, instances, until: cycleEnd, killAll, stall, dir });
  await fleet.resumed();
  stopped = true;
  await traffic;
  while (fleet.size < instances) await fleet.start();
  await sleep(Math.max(0, fleet.lastDeathAt + REGISTRY_PASS_MS - Date.now()));
  report(`cycle ${cycles} (${actions.join(", ")}; ${observations.requests} requests so far)`, await checkInvariants(dir, fleet, observations, accounts));
  trimUpstreams(upstreams);
}

const codes = await fleet.stopAll();
console.log(`chaos: final stop (SIGTERM) exit codes ${codes.join(", ")}`);
report("after the final stop", await checkInvariants(dir, fleet, observations, accounts));
const errors = fleet.errorLines();
checked++;
if (errors.length > 0) {
  violations++;
  console.log(`  VIOLATION ${errors.length} error lines in the gateways' logs, e.g.:`);
  for (const line of errors.slice(0, 10)) console.log(`    ${line}`);
}

checked++;
if (fleet.failedStarts.length > 0) {
  violations++;
  console.log(`  VIOLATION ${fleet.failedStarts.length} starts failed, e.g.:`);
  for (const line of fleet.failedStarts.slice(0, 5)) console.log(`    ${line}`);
}

const { starts, kills, terms, killAlls, stalls } = fleet.counts;
console.log(`chaos: ${((Date.now() - startedAt) / 1_000).toFixed(0)} s, seed ${seed}: ${observations.requests} model requests (${observations.completed.length} whole successes), ${observations.topUps.length} top-ups, ${observations.priceChanges} price changes`);
console.log(`chaos: ${starts} starts, ${kills} SIGKILLs (${killAlls} of all at once), ${terms} SIGTERMs, ${stalls} stalls, ${cycles} cycles, ${checked} facts checked, ${violations} violations`);
console.log(`chaos: client outcomes: ${observations.statusSummary()}`);
for (const [status, samples] of observations.samples) for (const sample of samples) console.log(`  ${status} e.g. ${sample}`);
disarmWatchdog();
await closeUpstreams(upstreams);
if (violations === 0 && !args.keep) rmSync(dir, { recursive: true, force: true });
else console.log(`chaos: database kept in ${dir}`);
process.exit(violations === 0 ? 0 : 1);
