/**
 * Whether the memory a gateway keeps after streamed chats is a leak or a plateau: batch after
 * batch of streamed chats to one gateway from source, and after each batch, once its idle
 * collection ran, its RSS (by mapping too), JS heap and live objects.
 *
 *   bun scripts/stream-memory.ts [--runtime bun|node|deno] [--batches 5] [--batch 1500]
 *     [--concurrency 12] [--mode mix|openai|anthropic|gemini|hangup] [--seed N] [--shrink]
 *     [--snapshots] [--malloc-trim] [--env NAME=VALUE ...]
 *
 * The gateway loads scripts/memory/probe.ts before its entry; the probe answers SIGUSR2 with a
 * full collection and a line of heap figures (Bun: objects by type; Node, Deno: V8's heap and
 * active handles), and with --snapshots a heap snapshot per sample to diff. The modes:
 * OpenAI chat streams, Anthropic /v1/messages streams, Gemini :streamGenerateContent, clients
 * hanging up mid-stream on all three, or all of these mixed. `--shrink` takes the first and
 * last samples after the 30 s release (Bun drops compiled code then); `--malloc-trim` ends with
 * glibc's malloc_trim(0) called in the gateway (through gdb), to show how much of its RSS is
 * free malloc memory; `--env` passes settings such as MALLOC_ARENA_MAX or NODE_OPTIONS to the
 * gateway. Loopback only; a watchdog ends it if a batch hangs.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnGateway, waitFor, type GatewayProcess } from "../test/billing/_support.ts";
import { buildNodeBundle, gatewayCommand, isRuntime, REPO_ROOT, type Runtime } from "../test/helpers/runtimes.ts";
import { Random } from "./chaos/random.ts";
import { closeUpstreams, trimUpstreams } from "./chaos/world.ts";
import { stopSpawnedOnOverrun } from "./chaos/watchdog.ts";
import { largestMoves, rssByMapping, type MappingRss } from "./memory/smaps.ts";
import { formatChatCall, type ChatFormat } from "./soak/calls.ts";
import { send, type Plan } from "./soak/client.ts";
import { sample as sampleResources } from "./soak/resources.ts";
import { buildWorld, startUpstreams } from "./soak/world.ts";

const { values: args } = parseArgs({
  options: {
    runtime: { type: "string", default: "bun" },
    batches: { type: "string", default: "5" },
    batch: { type: "string", default: "1500" },
    concurrency: { type: "string", default: "12" },
    mode: { type: "string", default: "mix" },
    seed: { type: "string", default: "1" },
    shrink: { type: "boolean", default: false },
    snapshots: { type: "boolean", default: false },
    "malloc-trim": { type: "boolean", default: false },
    env: { type: "string", multiple: true, default: [] },
  },
});

/** The streams of each single-format mode, as caller format and model ("mix" and "hangup" draw from all). */
const STREAMS: Record<string, [ChatFormat, string][]> = {
  openai: [["openai", "soak-openai"]],
  anthropic: [["anthropic", "soak-anthropic"]],
  gemini: [["gemini", "soak-gemini"]],
};
const MODES = ["mix", "hangup", ...Object.keys(STREAMS)];
const runtime = args.runtime;
if (!isRuntime(runtime)) throw new Error(`--runtime takes bun, node or deno`);
if (!MODES.includes(args.mode)) throw new Error(`--mode takes one of ${MODES.join(", ")}`);
const batches = Number(args.batches);
const batchSize = Number(args.batch);
const concurrency = Number(args.concurrency);
const random = new Random(Number(args.seed));
/** A batch of 1,500 streams takes 5-15 s; one that takes this long hung. */
const BATCH_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 20_000;
/** Past the gateway's 30 s release, which drops compiled code on Bun. */
const SHRINK_WAIT_MS = 32_000;

const disarmWatchdog = stopSpawnedOnOverrun("stream-memory", (batches + 2) * BATCH_TIMEOUT_MS + 2 * SHRINK_WAIT_MS);

const dir = mkdtempSync(join(tmpdir(), "stream-memory-"));
const probeFile = join(dir, "probe.jsonl");
const snapshotDir = join(dir, "snapshots");
if (args.snapshots) mkdirSync(snapshotDir);

/** The gateway's command line under `runtime` with the probe loaded before its entry. */
function probedCommand(runtime: Runtime): string[] {
  const probe = join(REPO_ROOT, "scripts", "memory", "probe.ts");
  const [program, ...rest] = gatewayCommand(runtime);
  if (runtime === "bun") return [program!, "--preload", probe, ...rest];
  if (runtime === "deno") return [program!, rest[0]!, "--preload", probe, ...rest.slice(1)];
  buildNodeBundle();
  const bundled = join(dir, "probe.js");
  const build = Bun.spawnSync([process.execPath, "build", probe, "--target=node", `--outfile=${bundled}`], { stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`bundling the probe failed: ${build.stderr.toString()}`);
  return [program!, "--import", bundled, ...rest];
}

const extraEnv = Object.fromEntries(args.env.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
const upstreams = await startUpstreams(random);
const gw: GatewayProcess = await spawnGateway(dir, { MEMPROBE_FILE: probeFile, ...(args.snapshots ? { MEMPROBE_SNAPSHOTS: snapshotDir } : {}), ...extraEnv }, 30_000, probedCommand(runtime));
const { accounts } = await buildWorld(gw, upstreams);
const rich = accounts.find((a) => a.name === "rich")!;
console.log(`stream-memory: ${runtime}, ${batches} batches of ${batchSize} (${args.mode}), concurrency ${concurrency}, pid ${gw.pid}, folder ${dir}${args.env.length ? `, env ${args.env.join(" ")}` : ""}`);

// ---------------------------------------------------------------- samples

const released = (strength: "collect" | "shrink") => gw.output().split(`"message":"memory released","strength":"${strength}"`).length - 1;
const probeLines = () => (existsSync(probeFile) ? readFileSync(probeFile, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

interface Row {
  label: string;
  /** RSS once the gateway's own release ran, from /proc. */
  rssMb: number;
  fds: number;
  /** The probe's line, taken after its own full collection. */
  probe: Record<string, any>;
  mappings: MappingRss;
}
const rows: Row[] = [];

/** Waits for the gateway's next release of `strength`, then reads /proc and asks the probe for its line. */
async function sampleAfterRelease(label: string, strength: "collect" | "shrink", releasedBefore: number): Promise<Row> {
  await waitFor(`the ${strength} release`, () => released(strength) > releasedBefore, strength === "shrink" ? SHRINK_WAIT_MS + 5_000 : 10_000, 100);
  const { rssMb, fds } = sampleResources(label, 0, gw.pid, dir);
  const mappings = rssByMapping(gw.pid);
  const linesBefore = probeLines().length;
  process.kill(gw.pid, "SIGUSR2");
  const probe = await waitFor("the probe's line", () => probeLines()[linesBefore], 60_000, 50);
  const row = { label, rssMb, fds, probe, mappings };
  rows.push(row);
  console.log(`stream-memory: ${label}: RSS ${rssMb} MB, probe ${summary(probe)}`);
  return row;
}

function summary(probe: Record<string, any>): string {
  if (probe.types) return `RSS ${probe.rss}, heap ${probe.heapSize} MB (capacity ${probe.heapCapacity}, extra ${probe.extraMemory}), ${probe.objects} objects, ${probe.protectedObjects} protected`;
  return `RSS ${probe.rss}, heap used ${probe.heapUsed} of ${probe.heapTotal} MB, external ${probe.external}, malloced ${probe.mallocedMemory} (peak ${probe.peakMallocedMemory}), handles ${JSON.stringify(probe.resources)}`;
}

// ---------------------------------------------------------------- traffic

/** One streamed chat of the mode: its format, model, and whether the client reads it whole or hangs up midway. */
function drawStream(): { plan: Plan; format: ChatFormat; model: string } {
  const hangUp = args.mode === "hangup" || (args.mode === "mix" && random.chance(0.25));
  const choices = args.mode in STREAMS ? STREAMS[args.mode]! : Object.values(STREAMS).flat();
  const [format, model] = random.pick(choices);
  return { plan: hangUp ? "midway" : "read", format, model };
}

/** Sends `batchSize` streamed chats, `concurrency` at a time; how many ended how (status and ending). */
async function runBatch(): Promise<Map<string, number>> {
  const endings = new Map<string, number>();
  let left = batchSize;
  const client = async () => {
    while (left > 0) {
      left -= 1;
      const { plan, format, model } = drawStream();
      const call = formatChatCall(random, rich, format, model, true, random.chance(0.25));
      const outcome = await send(gw.url, 0, call, plan, random, REQUEST_TIMEOUT_MS);
      const key = `${outcome.status ?? "-"} ${outcome.ending}`;
      endings.set(key, (endings.get(key) ?? 0) + 1);
    }
  };
  await Promise.race([Promise.all(Array.from({ length: concurrency }, client)), Bun.sleep(BATCH_TIMEOUT_MS).then(() => Promise.reject(new Error("a batch passed its timeout")))]);
  trimUpstreams(upstreams);
  return endings;
}

// With --shrink the start too is taken after the 30 s release, to compare like with like.
const start = await sampleAfterRelease("start", args.shrink ? "shrink" : "collect", 0);
for (let batch = 1; batch <= batches; batch++) {
  const before = released("collect");
  const startedAt = Date.now();
  const endings = await runBatch();
  console.log(`stream-memory: batch ${batch} in ${((Date.now() - startedAt) / 1_000).toFixed(1)} s: ${[...endings].map(([k, n]) => `${n} ${k}`).join(", ")}`);
  await sampleAfterRelease(`batch ${batch}`, "collect", before);
}
if (args.shrink) await sampleAfterRelease("after 30 s", "shrink", released("shrink"));
if (args["malloc-trim"]) {
  const trim = Bun.spawnSync(["gdb", "-p", String(gw.pid), "-batch", "-ex", "call (int) malloc_trim(0)"], { stdout: "pipe", stderr: "pipe" });
  const { rssMb } = sampleResources("trimmed", 0, gw.pid, dir);
  console.log(`stream-memory: after malloc_trim(0) (gdb exit ${trim.exitCode}): RSS ${rssMb} MB, was ${rows[rows.length - 1]!.rssMb}`);
  for (const line of largestMoves(rows[rows.length - 1]!.mappings, rssByMapping(gw.pid))) console.log(`  trimmed: ${line}`);
}

await gw.stop(15_000);
await closeUpstreams(upstreams);
disarmWatchdog();

// ---------------------------------------------------------------- report

const last = rows[rows.length - 1]!;
const isBunProbe = Boolean(start.probe.types);
const head = isBunProbe ? ["when", "RSS", "probe RSS", "heap", "capacity", "extra", "objects", "protected", "fds"] : ["when", "RSS", "probe RSS", "heap used", "heap total", "external", "malloced", "fds"];
const cells = (r: Row) =>
  isBunProbe
    ? [r.label, r.rssMb.toFixed(1), r.probe.rss.toFixed(1), r.probe.heapSize.toFixed(1), r.probe.heapCapacity.toFixed(1), r.probe.extraMemory.toFixed(1), String(r.probe.objects), String(r.probe.protectedObjects), String(r.fds)]
    : [r.label, r.rssMb.toFixed(1), r.probe.rss.toFixed(1), r.probe.heapUsed.toFixed(1), r.probe.heapTotal.toFixed(1), r.probe.external.toFixed(1), r.probe.mallocedMemory.toFixed(1), String(r.fds)];
console.log(`\n| ${head.join(" | ")} |\n|${head.map(() => "---").join("|")}|`);
for (const r of rows) console.log(`| ${cells(r).join(" | ")} |`);

console.log(`\nlargest RSS moves by mapping, start -> ${rows[1]?.label ?? "start"} -> ${last.label}:`);
for (const line of largestMoves(start.mappings, rows[1]?.mappings ?? start.mappings)) console.log(`  start -> ${rows[1]?.label}: ${line}`);
if (rows.length > 2) for (const line of largestMoves(rows[1]!.mappings, last.mappings)) console.log(`  ${rows[1]!.label} -> ${last.label}: ${line}`);
if (rows.length > 2) for (const line of largestMoves(start.mappings, last.mappings)) console.log(`  start -> ${last.label}: ${line}`);

if (isBunProbe) {
  const typeMoves = (from: Record<string, number>, to: Record<string, number>) =>
    Object.keys({ ...from, ...to })
      .map((type) => [type, (to[type] ?? 0) - (from[type] ?? 0)] as const)
      .filter(([, d]) => d !== 0)
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
      .slice(0, 15)
      .map(([type, d]) => `${type} ${d > 0 ? "+" : ""}${d}`)
      .join(", ");
  console.log(`\nobject types, start -> ${rows[1]?.label}: ${typeMoves(start.probe.types, rows[1]?.probe.types ?? {})}`);
  if (rows.length > 2) console.log(`object types, ${rows[1]!.label} -> ${last.label}: ${typeMoves(rows[1]!.probe.types, last.probe.types)}`);
  console.log(`protected types at ${last.label}: ${JSON.stringify(last.probe.protectedTypes)}`);
} else {
  console.log(`\nhandles at start: ${JSON.stringify(start.probe.resources)}; at ${last.label}: ${JSON.stringify(last.probe.resources)}`);
  const spaces = (r: Row) => Object.entries(r.probe.spaces as Record<string, { size: number; used: number }>).map(([name, s]) => `${name} ${s.used}/${s.size}`).join(", ");
  console.log(`V8 spaces (used/size MB) at start: ${spaces(start)}\nat ${last.label}: ${spaces(last)}`);
}
if (args.snapshots) console.log(`heap snapshots in ${snapshotDir}`);
else rmSync(dir, { recursive: true, force: true });
process.exit(0);
