/**
 * A soak that looks for what only time shows: leaks of file descriptors, sockets, upload
 * spools, memory, holds, leases or rows, over many mixed requests.
 *
 *   bun scripts/soak.ts [--seconds 60] [--seed N] [--concurrency 12] [--runtime bun] [--keep]      (npm run soak)
 *
 * `--runtime` runs the instances under bun, node (the bundle of `npm run build:node`) or deno,
 * or one each with two names: `--runtime node,deno`.
 *
 * Starts loopback upstreams (OpenAI, Anthropic, Gemini, an OpenAI media server, and three that
 * misbehave: one failing half its answers, one answering after the first-byte limit, one
 * breaking its streams off) and two gateway instances from source on one database, sets up
 * channels, prices and three accounts (one that runs out of money, one rate-limited, one rich),
 * then for `--seconds` sends a seeded mix to both (scripts/soak/calls.ts): chat in four formats,
 * plain and streamed, with tools; embeddings, rerank, images, speech, transcription uploads;
 * model lists, balances, token counts, admin top-ups and listings; bad bodies; clients that
 * hang up before the answer, mid-stream or mid-upload. Every request has a timeout.
 *
 * Every interval it prints each instance's RSS, open fds, sockets and the files left in its
 * TMPDIR; after the traffic stops and settles it checks the database against what the clients
 * saw (scripts/soak/checks.ts), the doctor, the logs, and, after the instances' idle memory
 * release (30 s), that fds, temp files and RSS came back. Exit code 1 on any violation.
 * Traffic goes to 127.0.0.1 only; the soak stops by itself (a watchdog ends it 3 minutes late).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PROCESS_MANAGEMENT_KEY, spawnGateway, type GatewayProcess } from "../test/billing/_support.ts";
import { sleep } from "../test/helpers/common.ts";
import { buildNodeBundle, gatewayCommand, isRuntime, RUNTIMES } from "../test/helpers/runtimes.ts";
import { Random } from "./chaos/random.ts";
import { drawCall, Operator } from "./soak/calls.ts";
import { send, type Plan } from "./soak/client.ts";
import { boundedTableRows, checkDatabase, checkLogs } from "./soak/checks.ts";
import { sample, table, type Sample } from "./soak/resources.ts";
import { Tally } from "./soak/tally.ts";
import { closeUpstreams, trimUpstreams } from "./chaos/world.ts";
import { stopSpawnedOnOverrun } from "./chaos/watchdog.ts";
import { buildWorld, FIRST_BYTE_LIMIT_MS, startUpstreams, waitUntilReady } from "./soak/world.ts";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    seed: { type: "string" },
    concurrency: { type: "string", default: "12" },
    runtime: { type: "string", default: "bun" },
    keep: { type: "boolean", default: false },
  },
});
const runtimeNames = args.runtime.split(",");
if (runtimeNames.length > 2 || !runtimeNames.every(isRuntime)) throw new Error(`--runtime takes one or two of ${RUNTIMES.join(", ")}, comma-separated`);
/** Each instance's runtime: "node" runs both under Node, "node,deno" one under each. */
const runtimes = [0, 1].map((i) => runtimeNames[Math.min(i, runtimeNames.length - 1)]!);
const seconds = Number(args.seconds);
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const concurrency = Number(args.concurrency);
/** No request of the mix takes a second when all is well: one that takes this long hung. */
const REQUEST_TIMEOUT_MS = 20_000;
/** After the traffic: holds settle, idle leases are handed back (250 ms), uploads are removed. */
const SETTLE_MS = 3_000;
/** Past the instances' idle release, which drops compiled code after 30 s without a request. */
const IDLE_RELEASE_MS = 32_000;
/** What an instance may hold after the soak beyond what it held before it: pooled keep-alive connections, caches. */
const FD_SLACK = 48;
const RSS_SLACK_MB = 64;

const disarmWatchdog = stopSpawnedOnOverrun("soak", (seconds + 180) * 1_000);

const random = new Random(seed);
const dir = mkdtempSync(join(tmpdir(), "soak-"));
const tmpDirs = [0, 1].map((i) => join(dir, `tmp-${i}`));
for (const tmp of tmpDirs) mkdirSync(tmp);
console.log(`soak: seed ${seed}, ${seconds} s, concurrency ${concurrency}, runtimes ${runtimes.join(" and ")}, folder ${dir}`);
if (runtimes.includes("node")) buildNodeBundle();

const upstreams = await startUpstreams(random);
const instanceEnv = (i: number) => ({
  TMPDIR: tmpDirs[i]!,
  GATEWAY_LOG_REQUESTS: "1",
  GATEWAY_CACHE_POLL_MS: "1000",
  GATEWAY_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_LIMIT_MS),
  GATEWAY_WHOLE_ANSWER_TIMEOUT_MS: String(FIRST_BYTE_LIMIT_MS),
  GATEWAY_BREAKER_COOLDOWN_MS: "2000",
});
const gateways: GatewayProcess[] = [];
for (const i of [0, 1]) gateways.push(await spawnGateway(dir, instanceEnv(i), 30_000, gatewayCommand(runtimes[i]!)));
const world = await buildWorld(gateways[0]!, upstreams);
for (const gw of gateways) await waitUntilReady(gw, world.accounts);

const samples: Sample[] = [];
const sampleAll = (label: string) => {
  const taken = gateways.map((gw, i) => sample(label, i, gw.pid, tmpDirs[i]!));
  samples.push(...taken);
  console.log(`soak: ${label}: ${taken.map((s) => `#${s.instance} (${runtimes[s.instance]}) ${s.rssMb} MB, ${s.fds} fds (${s.sockets} sockets), ${s.tempFiles} temp files`).join("; ")}; ${boundedTableRows(dir)}`);
  return taken;
};
const before = sampleAll("start");

// ---------------------------------------------------------------- traffic

const tally = new Tally();
const operator = new Operator(world.accounts);
const startedAt = Date.now();
const deadline = startedAt + seconds * 1_000;
const client = async () => {
  while (Date.now() < deadline) {
    const instance = random.int(0, 1);
    const plan: Plan = random.weighted({ read: 82, early: 4, midway: 14 });
    tally.record(await send(gateways[instance]!.url, instance, drawCall(random, world.accounts, operator), plan, random, REQUEST_TIMEOUT_MS));
    await sleep(random.int(0, 20));
  }
};
const sampleEveryMs = Math.max(10, Math.round(seconds / 6)) * 1_000;
const sampler = setInterval(() => {
  sampleAll(`${Math.round((Date.now() - startedAt) / 1_000)} s`);
  trimUpstreams(upstreams);
}, sampleEveryMs);
await Promise.all(Array.from({ length: concurrency }, client));
clearInterval(sampler);
const stoppedAt = Date.now();
console.log(`soak: traffic stopped after ${tally.requests} requests: ${tally.summary()}`);
console.log(`soak: whole answers by kind: ${tally.coverage()}`);
for (const [label, examples] of tally.samples) for (const example of examples) console.log(`  ${label} e.g. ${example}`);

// ---------------------------------------------------------------- checks

const violations = [...tally.violations];
await sleep(SETTLE_MS);
const settled = sampleAll("settled");
const database = await checkDatabase(dir, world.accounts, tally, gateways.length);
violations.push(...database.violations);
await sleep(Math.max(0, stoppedAt + IDLE_RELEASE_MS - Date.now()));
const idle = sampleAll("idle (released)");
for (const [i, start] of before.entries()) {
  const [now, quiet] = [settled[i]!, idle[i]!];
  if (now.tempFiles > 0 || quiet.tempFiles > 0) violations.push(`instance ${i}: ${now.tempFiles} files left in its TMPDIR after the traffic, ${quiet.tempFiles} after the idle release`);
  if (quiet.fds > start.fds + FD_SLACK) violations.push(`instance ${i}: ${quiet.fds} open fds when idle, ${start.fds} at the start`);
  if (quiet.rssMb > start.rssMb + RSS_SLACK_MB) violations.push(`instance ${i}: ${quiet.rssMb} MB RSS after the idle release, ${start.rssMb} MB at the start`);
}
const exits = await Promise.all(gateways.map((gw) => gw.stop(15_000)));
exits.forEach((code, i) => code !== 0 && violations.push(`instance ${i} exited ${code} on SIGTERM`));
violations.push(...checkLogs(gateways.map((gw) => gw.output()), [...world.secrets, PROCESS_MANAGEMENT_KEY]));
await closeUpstreams(upstreams);
disarmWatchdog();

// ---------------------------------------------------------------- report

console.log(`\n${table(samples)}\n`);
console.log("usage rows against what the clients saw (metered requests):");
for (const r of database.rows) {
  console.log(`  ${r.account.padEnd(8)} ${r.answered} answered 2xx (${r.whole} whole): ${r.rowsForAnswered} rows for them; ${r.rowsTotal} rows in all (${r.rows200} of status 200), ${r.rowsUnseen} of requests hung up before the head (${r.hungUpEarly} such)`);
}
console.log(`soak: ${((Date.now() - startedAt) / 1_000).toFixed(0)} s, seed ${seed}, ${runtimes.join(" and ")}: ${tally.requests} requests (${(tally.requests / seconds).toFixed(0)}/s); ${violations.length} violations`);
for (const v of violations.slice(0, 40)) console.log(`  VIOLATION ${v}`);
if (violations.length > 40) console.log(`  ... and ${violations.length - 40} more`);
if (violations.length === 0 && !args.keep) rmSync(dir, { recursive: true, force: true });
else console.log(`soak: folder kept in ${dir}`);
process.exit(violations.length === 0 ? 0 : 1);
