/**
 * Benchmark: the compiled gateway against calling the upstream directly, in one run.
 *
 *   bun scripts/bench.ts [--quick] [--skip-build] [--autocannon]      (npm run bench)
 *
 * Starts a fake OpenAI-compatible upstream (scripts/bench-upstream.ts) and the compiled
 * gateway (npm run build -> dist/gateway) on a temp database, sets up a user, key, price and
 * channel through the admin API, then measures, direct vs gateway with the same client and
 * body: latency at concurrency 1, requests/s at concurrency 64 (wrk, else autocannon),
 * streaming time to first byte and chunk-by-chunk delivery, gateway RSS idle and after 100k
 * requests (the gateway started from files on disk, as a service is; see installGateway),
 * and that every served request left one usage row. A bare Bun relay (scripts/bench-relay.ts)
 * is measured beside them at c=1, c=64 and streaming: what it adds is the floor one more Bun
 * HTTP hop costs here, so the gateway's own share is the difference. Prints a table with the
 * targets of issue 3 and writes it as JSON to dist/bench-result.json. Every process it
 * starts is stopped on exit; traffic goes to 127.0.0.1 only.
 *
 * Internally `bun scripts/bench.ts --client` is the measuring client process (spec in the
 * BENCH_CLIENT_SPEC environment variable, JSON report on stdout).
 */
import { chmodSync, closeSync, copyFileSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { rssMb } from "../test/helpers/process-memory.ts";

// ---------------------------------------------------------------- settings

/** Knobs of one run; `--quick` shrinks every phase. */
interface BenchSettings {
  quick: boolean;
  skipBuild: boolean;
  /** Sequential requests timed per target (after the warm-up). */
  latencyRequests: number;
  latencyWarmup: number;
  /** Streams read per target. */
  streamRequests: number;
  streamWarmup: number;
  /** Seconds of each concurrency-64 run. */
  loadSeconds: number;
  concurrency: number;
  /** wrk where installed, else (or with --autocannon) autocannon from node_modules. */
  loadTool: "wrk" | "autocannon";
  /** Gateway requests to serve before the "after" RSS reading. */
  rssRequests: number;
  upstreamChunks: number;
  upstreamDelayMs: number;
  /** Hard deadline of the whole run. */
  deadlineSeconds: number;
}

/** The targets of issue 3, section "Benchmark". */
const TARGETS = {
  addedP50Us: 250,
  addedP99Us: 1000,
  gatewayRps: 10_000,
  addedTtfbP50Us: 500,
  idleRssMb: 50,
  /** "No growth": what the RSS may move over the run before it counts as growth. */
  rssGrowthToleranceMb: 5,
} as const;

const REPO = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const MANAGEMENT_KEY = "mk-gw-bench-management-key-0123456789";
const MODEL = "bench-model";
const REQUEST_BODY = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hello" }] });
const STREAM_BODY = JSON.stringify({
  model: MODEL,
  messages: [{ role: "user", content: "Hello" }],
  stream: true,
  stream_options: { include_usage: true },
});

/** Reads the command line into BenchSettings. */
function readSettings(argv: string[]): BenchSettings & { client: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      "skip-build": { type: "boolean", default: false },
      autocannon: { type: "boolean", default: false },
      client: { type: "boolean", default: false },
    },
  });
  const quick = values.quick === true;
  return {
    client: values.client === true,
    quick,
    skipBuild: values["skip-build"] === true,
    latencyRequests: quick ? 1000 : 3000,
    latencyWarmup: quick ? 300 : 1000,
    streamRequests: quick ? 60 : 200,
    streamWarmup: quick ? 10 : 20,
    loadSeconds: quick ? 5 : 10,
    concurrency: 64,
    loadTool: values.autocannon !== true && Bun.which("wrk") ? "wrk" : "autocannon",
    rssRequests: quick ? 30_000 : 100_000,
    upstreamChunks: 20,
    upstreamDelayMs: 2,
    deadlineSeconds: quick ? 150 : 330,
  };
}

// ---------------------------------------------------------------- small helpers

/** Nearest-rank percentile of ascending `sorted` values. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Median of unsorted values. */
function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Rounds to `digits` decimals. */
function round(value: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After "(comm) ", field 3 of stat is index 0: utime is stat field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Logs a progress line on stderr, so stdout stays the table. */
function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

// ---------------------------------------------------------------- child processes

/** Every process this run started; stopped on exit. */
const children = new Set<Subprocess>();
let tempDir: string | null = null;

/** Starts a child process with piped stdout and tracks it for cleanup. */
function spawnChild(cmd: string[], env: Record<string, string> = {}): Subprocess<"ignore", "pipe", "pipe"> {
  const child = Bun.spawn(cmd, { cwd: REPO, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.add(child);
  void child.exited.then(() => children.delete(child));
  return child;
}

/** Stops every child (SIGTERM, then SIGKILL) and removes the temp folder. Synchronous. */
function stopEverything(): void {
  for (const child of children) child.kill("SIGTERM");
  const deadline = Date.now() + 3000;
  for (const child of children) {
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) Bun.sleepSync(20);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = null;
}

/** Collects a stream's text line by line and lets callers wait for a line matching a pattern. */
class LineWatcher {
  #lines: string[] = [];
  #waiters: { pattern: RegExp; resolve(match: RegExpMatchArray): void }[] = [];

  /** Starts draining `stream` (always drained, so a chatty child never blocks on a full pipe). */
  constructor(stream: ReadableStream<Uint8Array>) {
    void this.#drain(stream);
  }

  /** The last lines seen, for error messages. */
  tail(count = 15): string {
    return this.#lines.slice(-count).join("\n");
  }

  /** Resolves with the first line (seen or to come) matching `pattern`; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    for (const line of this.#lines) {
      const match = pattern.exec(line);
      if (match) return Promise.resolve(match);
    }
    return new Promise((resolve, reject) => {
      const waiter = { pattern, resolve };
      this.#waiters.push(waiter);
      setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for ${pattern}; last output:\n${this.tail()}`));
      }, timeoutMs).unref();
    });
  }

  /** Reads the stream to its end, splitting lines and waking waiters. */
  async #drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const bytes of stream) {
      const lines = (partial + decoder.decode(bytes, { stream: true })).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.#accept(line);
    }
  }

  /** Keeps one line (only the latest few hundred) and resolves waiters it matches. */
  #accept(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length > 400) this.#lines.splice(0, 200);
    this.#waiters = this.#waiters.filter((waiter) => {
      const match = waiter.pattern.exec(line);
      if (match) waiter.resolve(match);
      return !match;
    });
  }
}

/** Runs a child to completion and returns its stdout; throws with its output on failure. */
async function runToEnd(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawnChild(cmd, env);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  return stdout;
}

// ---------------------------------------------------------------- upstream and gateway

/** A started server process. */
interface Server {
  process: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  output: LineWatcher;
}

/** Waits for a line of a starting server; fails at once, with its output, if the process exits first. */
async function waitForStart(child: Subprocess, output: LineWatcher, errors: LineWatcher, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const exited = child.exited.then((code) => {
    throw new Error(`${pattern} never seen: the process exited ${code}; its output:\n${output.tail()}\n${errors.tail()}`);
  });
  return Promise.race([output.waitFor(pattern, timeoutMs), exited]);
}

/** Starts the fake upstream on a free port. */
async function startUpstream(settings: BenchSettings): Promise<Server> {
  const child = spawnChild([
    BUN,
    join(REPO, "scripts/bench-upstream.ts"),
    "--port", "0",
    "--chunks", String(settings.upstreamChunks),
    "--delay-ms", String(settings.upstreamDelayMs),
  ]);
  const output = new LineWatcher(child.stdout);
  const match = await waitForStart(child, output, new LineWatcher(child.stderr), /^listening (\d+)$/, 15_000);
  return { process: child, port: Number(match[1]), output };
}

/** Starts the bare relay (scripts/bench-relay.ts) in front of the upstream. */
async function startRelay(upstreamPort: number): Promise<Server> {
  const child = spawnChild([BUN, join(REPO, "scripts/bench-relay.ts"), "--port", "0", "--upstream", String(upstreamPort)]);
  const output = new LineWatcher(child.stdout);
  const match = await waitForStart(child, output, new LineWatcher(child.stderr), /^listening (\d+)$/, 15_000);
  return { process: child, port: Number(match[1]), output };
}

/** npm run build (falls back to `bun scripts/build.ts` where npm is missing). */
async function buildGateway(): Promise<void> {
  const command = Bun.which("npm") ? ["npm", "run", "--silent", "build"] : [BUN, "scripts/build.ts"];
  progress(`building: ${command.join(" ")}`);
  const out = await runToEnd(command);
  progress(out.trim().split("\n").pop() ?? "built");
}

/** What installing the executable measured: RSS at start from just-written files, and whether they were then evicted. */
interface Install {
  executable: string;
  freshStartMb: number;
  /** False where the files could not be dropped from the page cache (no GNU dd): RSS then reads high. */
  filesFromDisk: boolean;
}

/**
 * Installs a copy of dist/gateway in `dir` (so a rebuild by someone else mid-run cannot swap
 * it) the way an operator's service finds it: the executable, and the libSQL addon it unpacks
 * into TMPDIR on its first start, on disk rather than in just-written page cache. RSS counts
 * the file pages a process maps, and a file written moments ago maps in whole large folios:
 * from fresh files the gateway reads 6-8 MB more RSS than from the same files read back from
 * disk. The first start, which unpacks the addon, is measured and stopped; both files are then
 * flushed and dropped from the page cache.
 */
async function installGateway(dir: string): Promise<Install> {
  const executable = join(dir, "gateway");
  copyFileSync(join(REPO, "dist/gateway"), executable);
  chmodSync(executable, 0o755);
  const first = await startGateway(executable, dir, join(dir, "first-start.db"));
  const freshStartMb = await settledRssMb(first.process.pid);
  first.process.kill("SIGTERM");
  await first.process.exited;
  const addons = readdirSync(dir).filter((name) => name.endsWith(".node")).map((name) => join(dir, name));
  const filesFromDisk = [executable, ...addons].map(dropFromPageCache).every(Boolean);
  return { executable, freshStartMb, filesFromDisk };
}

/** RSS of a gateway that just started, read once its start-up has settled (2 s), before any request. */
async function settledRssMb(pid: number): Promise<number> {
  await Bun.sleep(2000);
  return rssMb(pid);
}

/** Flushes `path` and asks the kernel to drop its pages (posix_fadvise DONTNEED, through GNU dd); true if it could. */
function dropFromPageCache(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd); // only clean pages can be dropped
  } finally {
    closeSync(fd);
  }
  return Bun.spawnSync(["dd", `if=${path}`, "iflag=nocache", "count=0", "status=none"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

/** Starts `executable` on the database file `database`, TMPDIR `dir` and a known management key. */
async function startGateway(executable: string, dir: string, database: string): Promise<Server> {
  const child = spawnChild([executable], {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: `file:${database}`,
    GATEWAY_DEMO: "0",
    GATEWAY_MANAGEMENT_KEY: MANAGEMENT_KEY,
    TMPDIR: dir,
  });
  const output = new LineWatcher(child.stdout);
  const match = await waitForStart(child, output, new LineWatcher(child.stderr), /"message":"gateway listening".*"port":(\d+)/, 30_000);
  return { process: child, port: Number(match[1]), output };
}

/** Calls the admin API with the management key; returns the JSON body or throws. */
async function admin(gatewayPort: number, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${gatewayPort}/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} /v1/admin${path} -> ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Creates the bench account (enterprise plan, large balance), its API key, the price and the
 * channel to the fake upstream. The enterprise request limit is raised so the limiter stays on
 * but never refuses the bench's own traffic. Returns the API key.
 */
async function setUpAccount(gatewayPort: number, upstreamPort: number): Promise<string> {
  await admin(gatewayPort, "PATCH", "/settings", {
    plans: { enterprise: { requests_per_minute: 1_000_000_000, tokens_per_minute: 1_000_000_000_000 } },
  });
  const user = await admin(gatewayPort, "POST", "/users", { email: "bench@example.com", balance: 100_000, plan: "enterprise" });
  const token = await admin(gatewayPort, "POST", "/tokens", { user_id: user.id, name: "bench" });
  await admin(gatewayPort, "POST", "/prices", { model: MODEL, mode: "chat", input_per_million: 0.5, output_per_million: 1.5 });
  await admin(gatewayPort, "POST", "/channels", {
    name: "bench-upstream",
    type: "openai",
    base_url: `http://127.0.0.1:${upstreamPort}/v1`,
    api_key: "x",
    models: [MODEL],
  });
  if (typeof token.key !== "string") throw new Error(`token without key: ${JSON.stringify(token)}`);
  return token.key;
}

/** The number of usage rows the gateway holds (GET /v1/admin/usage?limit=1 -> total). */
async function usageRows(gatewayPort: number): Promise<number> {
  return Number((await admin(gatewayPort, "GET", "/usage?limit=1")).total);
}

// ---------------------------------------------------------------- client process (--client)

/** Where a client sends its requests. */
interface Target {
  name: "direct" | "relay" | "gateway";
  url: string;
  headers: Record<string, string>;
}

/** What the parent asks a client process to measure. */
interface ClientSpec {
  kind: "latency" | "stream";
  targets: Target[];
  body: string;
  count: number;
  warmup: number;
}

/** Concurrency-1 latency of one target. */
interface LatencySide {
  p50Us: number;
  p99Us: number;
  meanUs: number;
  /** Requests answered 200, warm-up included. */
  ok: number;
  failed: number;
}

/** Streaming figures of one target. */
interface StreamSide {
  ttfbP50Us: number;
  ttfbP99Us: number;
  /** Per stream: read() deliveries that carried at least one complete SSE event (median, min). */
  deliveriesMedian: number;
  deliveriesMin: number;
  eventsMedian: number;
  /** Most events any single read() delivered, the final one excluded. */
  maxEventsPerDeliveryBeforeEnd: number;
  /** Median gap between consecutive deliveries, ms. */
  gapMedianMs: number;
  /** Streams answered 200 that ended with [DONE], warm-up included. */
  ok: number;
  failed: number;
}

/** A client's report: one entry per target name. */
type ClientReport<T> = Record<string, T>;

/** One timed request: microseconds to the end of the body, and the status. */
async function timeRequest(target: Target, body: string): Promise<{ us: number; status: number }> {
  const start = performance.now();
  try {
    const response = await fetch(target.url, { method: "POST", headers: target.headers, body, signal: AbortSignal.timeout(10_000) });
    await response.arrayBuffer();
    return { us: (performance.now() - start) * 1000, status: response.status };
  } catch {
    return { us: (performance.now() - start) * 1000, status: 0 };
  }
}

/** Sequential loop over every target, interleaved in blocks so drift hits both alike. */
async function measureLatency(spec: ClientSpec): Promise<ClientReport<LatencySide>> {
  const samples = new Map<string, number[]>(spec.targets.map((t) => [t.name, []]));
  const ok = new Map<string, number>(spec.targets.map((t) => [t.name, 0]));
  const block = 100;
  for (let first = -spec.warmup; first < spec.count; first += block) {
    for (const target of spec.targets) {
      for (let i = first; i < Math.min(first + block, spec.count); i++) {
        const { us, status } = await timeRequest(target, spec.body);
        if (status === 200) ok.set(target.name, ok.get(target.name)! + 1);
        if (i >= 0) samples.get(target.name)!.push(us);
      }
    }
  }
  const report: ClientReport<LatencySide> = {};
  for (const target of spec.targets) {
    const sorted = samples.get(target.name)!.sort((a, b) => a - b);
    const total = spec.count + spec.warmup;
    report[target.name] = {
      p50Us: round(percentile(sorted, 50)),
      p99Us: round(percentile(sorted, 99)),
      meanUs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
      ok: ok.get(target.name)!,
      failed: total - ok.get(target.name)!,
    };
  }
  return report;
}

/** What reading one stream showed. */
interface StreamSample {
  ok: boolean;
  ttfbUs: number;
  deliveries: number;
  events: number;
  maxEventsBeforeEnd: number;
  gapsMs: number[];
}

/** Reads one stream, noting when each read() delivered bytes and how many SSE events it completed. */
async function readStream(target: Target, body: string): Promise<StreamSample> {
  const sample: StreamSample = { ok: false, ttfbUs: Number.NaN, deliveries: 0, events: 0, maxEventsBeforeEnd: 0, gapsMs: [] };
  const start = performance.now();
  const response = await fetch(target.url, { method: "POST", headers: target.headers, body, signal: AbortSignal.timeout(20_000) });
  if (!response.body) return sample;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let lastArrival = Number.NaN;
  let lastCount = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now();
    if (Number.isNaN(sample.ttfbUs)) sample.ttfbUs = (now - start) * 1000;
    const parts = (pending + decoder.decode(value, { stream: true })).split(/\r?\n\r?\n/);
    pending = parts.pop() ?? "";
    if (parts.length === 0) continue;
    sample.maxEventsBeforeEnd = Math.max(sample.maxEventsBeforeEnd, lastCount);
    lastCount = parts.length;
    sample.deliveries += 1;
    sample.events += parts.length;
    if (!Number.isNaN(lastArrival)) sample.gapsMs.push(now - lastArrival);
    lastArrival = now;
    if (parts.some((p) => p.trim() === "data: [DONE]")) sample.ok = response.status === 200;
  }
  return sample;
}

/** Reads `count` streams per target, alternating targets request by request. */
async function measureStreams(spec: ClientSpec): Promise<ClientReport<StreamSide>> {
  const samples = new Map<string, StreamSample[]>(spec.targets.map((t) => [t.name, []]));
  const ok = new Map<string, number>(spec.targets.map((t) => [t.name, 0]));
  for (let i = -spec.warmup; i < spec.count; i++) {
    for (const target of spec.targets) {
      const sample = await readStream(target, spec.body).catch(() => null);
      if (sample?.ok) ok.set(target.name, ok.get(target.name)! + 1);
      if (i >= 0 && sample) samples.get(target.name)!.push(sample);
    }
  }
  const report: ClientReport<StreamSide> = {};
  for (const target of spec.targets) report[target.name] = summariseStreams(samples.get(target.name)!, ok.get(target.name)!, spec);
  return report;
}

/** Folds the samples of one target into its StreamSide. */
function summariseStreams(samples: StreamSample[], ok: number, spec: ClientSpec): StreamSide {
  const ttfb = samples.map((s) => s.ttfbUs).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const deliveries = samples.map((s) => s.deliveries);
  return {
    ttfbP50Us: round(percentile(ttfb, 50)),
    ttfbP99Us: round(percentile(ttfb, 99)),
    deliveriesMedian: median(deliveries),
    deliveriesMin: Math.min(...deliveries),
    eventsMedian: median(samples.map((s) => s.events)),
    maxEventsPerDeliveryBeforeEnd: Math.max(...samples.map((s) => s.maxEventsBeforeEnd)),
    gapMedianMs: round(median(samples.flatMap((s) => s.gapsMs)), 2),
    ok,
    failed: spec.count + spec.warmup - ok,
  };
}

/** Entry of the client process: runs the spec from BENCH_CLIENT_SPEC and prints the report. */
async function clientMain(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_CLIENT_SPEC ?? "{}") as ClientSpec;
  const report = spec.kind === "latency" ? await measureLatency(spec) : await measureStreams(spec);
  console.log(JSON.stringify(report));
}

/** Runs a client process for `spec` and returns its parsed report. */
async function runClient<T>(spec: ClientSpec): Promise<ClientReport<T>> {
  const stdout = await runToEnd([BUN, join(REPO, "scripts/bench.ts"), "--client"], { BENCH_CLIENT_SPEC: JSON.stringify(spec) });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as ClientReport<T>;
}

// ---------------------------------------------------------------- load at concurrency 64

/** One load-tool run against one URL. */
interface LoadResult {
  tool: "wrk" | "autocannon";
  seconds: number;
  /** Completed responses. */
  requests: number;
  /** Completed responses that were 2xx (200 here). */
  ok: number;
  non2xx: number;
  socketErrors: number;
  rps: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** CPU cores the load tool itself used on average. */
  toolCores: number;
}

/** A wrk latency figure ("812.00us", "1.20ms", "1.01s") in milliseconds. */
function wrkDurationMs(text: string | undefined): number {
  const match = /([\d.]+)(us|ms|s|m)\b/.exec(text ?? "");
  if (!match) return Number.NaN;
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as "us" | "ms" | "s" | "m"];
  return round(Number(match[1]) * factor, 3);
}

/** Parses wrk's text report. */
function parseWrk(output: string, seconds: number): Omit<LoadResult, "toolCores"> {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? 0);
  const requests = number(/(\d+) requests in/);
  const non2xx = number(/Non-2xx or 3xx responses: (\d+)/);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    tool: "wrk",
    seconds,
    requests,
    ok: requests - non2xx,
    non2xx,
    socketErrors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    rps: round(number(/Requests\/sec:\s+([\d.]+)/)),
    latencyP50Ms: wrkDurationMs(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    latencyP99Ms: wrkDurationMs(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
  };
}

/** Autocannon's --json report, the fields read here. */
interface AutocannonJson {
  requests: { average: number };
  latency: { p50: number; p99: number };
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** Runs the load tool for `seconds` at `concurrency` and reads its report. */
async function runLoad(tool: LoadResult["tool"], target: Target, body: string, seconds: number, concurrency: number, dir: string): Promise<LoadResult> {
  const wrk = tool === "wrk" ? Bun.which("wrk") : null;
  const command = wrk ? wrkCommand(wrk, target, body, seconds, concurrency, dir) : autocannonCommand(target, body, seconds, concurrency);
  const child = spawnChild(command);
  const stdoutText = new Response(child.stdout).text();
  const stderrText = new Response(child.stderr).text();
  let toolCpu = 0;
  while (child.exitCode === null) {
    toolCpu = Math.max(toolCpu, cpuSeconds(child.pid) || 0);
    await Bun.sleep(200);
  }
  const [stdout, stderr, code] = await Promise.all([stdoutText, stderrText, child.exited]);
  if (code !== 0) throw new Error(`${command[0]} exited ${code}: ${stderr.slice(-1000)}`);
  const toolCores = round(toolCpu / seconds, 2);
  if (wrk) return { ...parseWrk(stdout, seconds), toolCores };
  const json = JSON.parse(stdout) as AutocannonJson;
  return {
    tool: "autocannon",
    seconds,
    requests: json["2xx"] + json.non2xx,
    ok: json["2xx"],
    non2xx: json.non2xx,
    socketErrors: json.errors + json.timeouts,
    rps: round(json.requests.average),
    latencyP50Ms: json.latency.p50,
    latencyP99Ms: json.latency.p99,
    toolCores,
  };
}

/** The wrk command line, with a Lua script (written to `dir`) that sets method, body and headers. */
function wrkCommand(wrk: string, target: Target, body: string, seconds: number, concurrency: number, dir: string): string[] {
  const lua = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(body)}`];
  for (const [name, value] of Object.entries(target.headers)) lua.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  const script = join(dir, `wrk-${target.name}.lua`);
  writeFileSync(script, lua.join("\n") + "\n");
  return [wrk, "-t2", `-c${concurrency}`, `-d${seconds}s`, "--latency", "-s", script, target.url];
}

/** The autocannon command line (run with node from node_modules). */
function autocannonCommand(target: Target, body: string, seconds: number, concurrency: number): string[] {
  const headers = Object.entries(target.headers).flatMap(([name, value]) => ["-H", `${name}=${value}`]);
  const runner = Bun.which("node") ?? BUN;
  return [runner, join(REPO, "node_modules/autocannon/autocannon.js"), "-c", String(concurrency), "-d", String(seconds), "-m", "POST", "-b", body, ...headers, "--json", target.url];
}

// ---------------------------------------------------------------- the run

/** Everything measured, as written to dist/bench-result.json. */
interface BenchResult {
  date: string;
  /** The commit checked out when the gateway was built (uncommitted changes not shown). */
  commit: string;
  machine: { cores: number; model: string; loadavgBefore: number[]; loadavgAfter: number[] };
  settings: BenchSettings;
  loadTool: string;
  latency: { direct: LatencySide; relay: LatencySide; gateway: LatencySide; addedP50Us: number; addedP99Us: number };
  throughput: {
    direct: LoadResult;
    relay: LoadResult;
    gateway: LoadResult;
    ratio: number;
    gatewayCores: number;
    upstreamCores: number;
  };
  streaming: {
    direct: StreamSide;
    relay: StreamSide;
    gateway: StreamSide;
    addedTtfbP50Us: number;
    upstreamWrites: number;
    unbatched: boolean;
  };
  memory: {
    /** RSS 2 s after start, before any request: the first start from just-written files, and the measured start from files on disk. */
    start: { freshFilesMb: number; filesFromDiskMb: number; filesFromDisk: boolean };
    idleMb: number;
    samples: { served: number; rssMb: number }[];
    afterMb: number;
    afterRequests: number;
    growthMb: number;
    /** A further load on the warm gateway: RSS that keeps climbing here is a leak, not warm-up. */
    warm: { requests: number; afterMb: number; growthMb: number };
  };
  usage: { rows: number; gateway200: number; gatewayOther: number; difference: number; inFlightBound: number; consistent: boolean };
  targets: { name: string; measured: string; target: string; pass: boolean }[];
}

/** The three targets (the upstream directly, through the bare relay, through the gateway): same body, own key each. */
type Targets = Record<Target["name"], Target>;

/** The three targets: the upstream directly, the bare relay and the gateway. */
function targetsOf(upstreamPort: number, relayPort: number, gatewayPort: number, apiKey: string): Targets {
  const headers = (key: string) => ({ "content-type": "application/json", authorization: `Bearer ${key}` });
  return {
    direct: { name: "direct", url: `http://127.0.0.1:${upstreamPort}/v1/chat/completions`, headers: headers("x") },
    relay: { name: "relay", url: `http://127.0.0.1:${relayPort}/v1/chat/completions`, headers: headers("x") },
    gateway: { name: "gateway", url: `http://127.0.0.1:${gatewayPort}/v1/chat/completions`, headers: headers(apiKey) },
  };
}

/** Counts the gateway answers the clients saw, across phases. */
class ServedCounter {
  /** Answers with status 200. */
  total = 0;
  /** Answers with another status (each still writes a usage row). */
  other = 0;
  /** The load-tool runs against the gateway; each may leave up to `concurrency` requests unseen. */
  loadRuns = 0;

  /** Adds one client phase's answers. */
  add(ok: number, other: number): void {
    this.total += ok;
    this.other += other;
  }

  /** Adds one load-tool run. */
  addLoad(result: LoadResult): void {
    this.add(result.ok, result.non2xx);
    this.loadRuns += 1;
  }
}

/** Phase a: concurrency-1 latency, direct and gateway interleaved. */
async function phaseLatency(settings: BenchSettings, t: Targets, served: ServedCounter): Promise<BenchResult["latency"]> {
  progress(`latency at c=1: ${settings.latencyWarmup} warm-up + ${settings.latencyRequests} requests per target`);
  const report = await runClient<LatencySide>({ kind: "latency", targets: [t.direct, t.relay, t.gateway], body: REQUEST_BODY, count: settings.latencyRequests, warmup: settings.latencyWarmup });
  const direct = report.direct!;
  const gateway = report.gateway!;
  served.add(gateway.ok, gateway.failed);
  return { direct, relay: report.relay!, gateway, addedP50Us: gateway.p50Us - direct.p50Us, addedP99Us: gateway.p99Us - direct.p99Us };
}

/** Phase c: streaming time to first byte and chunk-by-chunk delivery. */
async function phaseStreaming(settings: BenchSettings, t: Targets, served: ServedCounter): Promise<BenchResult["streaming"]> {
  progress(`streaming: ${settings.streamRequests} streams per target (${settings.upstreamChunks} chunks, ${settings.upstreamDelayMs} ms apart)`);
  const report = await runClient<StreamSide>({ kind: "stream", targets: [t.direct, t.relay, t.gateway], body: STREAM_BODY, count: settings.streamRequests, warmup: settings.streamWarmup });
  const direct = report.direct!;
  const gateway = report.gateway!;
  served.add(gateway.ok, gateway.failed);
  const upstreamWrites = settings.upstreamChunks + 1;
  // Unbatched: the gateway delivered (nearly) as many separate reads as the upstream made writes.
  const unbatched = gateway.deliveriesMedian >= upstreamWrites - 1 && gateway.deliveriesMin >= upstreamWrites * 0.8;
  return { direct, relay: report.relay!, gateway, addedTtfbP50Us: gateway.ttfbP50Us - direct.ttfbP50Us, upstreamWrites, unbatched };
}

/** Phases b and d: requests/s at c=64 for both, then gateway load until `rssRequests` were served, sampling RSS. */
async function phaseLoad(
  settings: BenchSettings,
  t: Targets,
  servers: { upstream: Server; gateway: Server },
  served: ServedCounter,
  dir: string,
): Promise<{ throughput: BenchResult["throughput"]; samples: { served: number; rssMb: number }[] }> {
  progress(`c=${settings.concurrency} for ${settings.loadSeconds}s: direct`);
  const direct = await runLoad(settings.loadTool, t.direct, REQUEST_BODY, settings.loadSeconds, settings.concurrency, dir);
  progress(`c=${settings.concurrency} for ${settings.loadSeconds}s: bare relay`);
  const relay = await runLoad(settings.loadTool, t.relay, REQUEST_BODY, settings.loadSeconds, settings.concurrency, dir);
  progress(`c=${settings.concurrency} for ${settings.loadSeconds}s: gateway`);
  const gwPid = servers.gateway.process.pid;
  const upPid = servers.upstream.process.pid;
  const [gwCpu0, upCpu0] = [cpuSeconds(gwPid), cpuSeconds(upPid)];
  const gateway = await runLoad(settings.loadTool, t.gateway, REQUEST_BODY, settings.loadSeconds, settings.concurrency, dir);
  const [gwCpu1, upCpu1] = [cpuSeconds(gwPid), cpuSeconds(upPid)];
  served.addLoad(gateway);
  const samples = [{ served: served.total, rssMb: rssMb(gwPid) }];
  await fillToTarget(settings, t.gateway, gateway.rps, served, samples, gwPid, dir);
  return {
    throughput: {
      direct,
      relay,
      gateway,
      ratio: round(gateway.rps / direct.rps, 3),
      gatewayCores: round((gwCpu1 - gwCpu0) / settings.loadSeconds, 2),
      upstreamCores: round((upCpu1 - upCpu0) / settings.loadSeconds, 2),
    },
    samples,
  };
}

/** More c=64 gateway load until `rssRequests` gateway requests were served; an RSS sample after each run. */
async function fillToTarget(
  settings: BenchSettings,
  target: Target,
  rps: number,
  served: ServedCounter,
  samples: { served: number; rssMb: number }[],
  gatewayPid: number,
  dir: string,
): Promise<void> {
  for (let run = 0; run < 8 && served.total < settings.rssRequests; run++) {
    const remaining = settings.rssRequests - served.total;
    const seconds = Math.min(30, Math.max(2, Math.ceil((remaining / Math.max(rps, 500)) * 1.05)));
    progress(`gateway load for ${seconds}s more (${served.total} of ${settings.rssRequests} served)`);
    const result = await runLoad(settings.loadTool, target, REQUEST_BODY, seconds, settings.concurrency, dir);
    served.addLoad(result);
    samples.push({ served: served.total, rssMb: rssMb(gatewayPid) });
    if (result.ok === 0) throw new Error(`the gateway answered no request with 200 in a ${seconds}s run (${result.non2xx} non-2xx, ${result.socketErrors} socket errors)`);
  }
}

/**
 * Phase d2: one more gateway load as long as the first, then RSS again after the same pause.
 * Against the reading before it, this tells a leak (RSS keeps climbing) from warm-up (JIT
 * code, a larger heap, the database page cache), which the idle-to-after figure mixes.
 */
async function phaseWarmGrowth(settings: BenchSettings, target: Target, served: ServedCounter, gatewayPid: number, warmMb: number, dir: string): Promise<BenchResult["memory"]["warm"]> {
  const before = served.total;
  progress(`c=${settings.concurrency} for ${settings.loadSeconds}s more: gateway, warm (leak check)`);
  const result = await runLoad(settings.loadTool, target, REQUEST_BODY, settings.loadSeconds, settings.concurrency, dir);
  served.addLoad(result);
  await Bun.sleep(2000);
  const afterMb = rssMb(gatewayPid);
  return { requests: served.total - before, afterMb, growthMb: round(afterMb - warmMb, 1) };
}

/** Phase e: usage rows against the 200s the clients counted. */
async function phaseUsage(gatewayPort: number, served: ServedCounter, concurrency: number): Promise<BenchResult["usage"]> {
  await Bun.sleep(1000); // rows are committed before each response ends; this only lets stragglers land
  const rows = await usageRows(gatewayPort);
  // Every answered request writes a row, so other statuses (none expected) count too.
  const difference = rows - served.total - served.other;
  const inFlightBound = served.loadRuns * concurrency;
  // A load tool stops with up to `concurrency` requests in flight: the gateway serves and records
  // them, the tool never counts them. Anything outside [0, bound] is a real mismatch.
  return { rows, gateway200: served.total, gatewayOther: served.other, difference, inFlightBound, consistent: difference >= 0 && difference <= inFlightBound };
}

/** The PASS/MISS lines against the targets. */
function judge(r: Omit<BenchResult, "targets">): BenchResult["targets"] {
  const us = (n: number) => `${round(n)} µs`;
  return [
    { name: "added latency p50 (c=1)", measured: us(r.latency.addedP50Us), target: `≤ ${TARGETS.addedP50Us} µs`, pass: r.latency.addedP50Us <= TARGETS.addedP50Us },
    { name: "added latency p99 (c=1)", measured: us(r.latency.addedP99Us), target: `≤ ${TARGETS.addedP99Us} µs`, pass: r.latency.addedP99Us <= TARGETS.addedP99Us },
    { name: "gateway req/s (c=64)", measured: `${round(r.throughput.gateway.rps)}`, target: `≥ ${TARGETS.gatewayRps}`, pass: r.throughput.gateway.rps >= TARGETS.gatewayRps },
    { name: "added TTFB p50 (stream)", measured: us(r.streaming.addedTtfbP50Us), target: `≤ ${TARGETS.addedTtfbP50Us} µs`, pass: r.streaming.addedTtfbP50Us <= TARGETS.addedTtfbP50Us },
    { name: "chunks unbatched", measured: r.streaming.unbatched ? "yes" : "no", target: "yes", pass: r.streaming.unbatched },
    { name: "idle RSS", measured: `${r.memory.idleMb} MB`, target: `≤ ${TARGETS.idleRssMb} MB`, pass: r.memory.idleMb <= TARGETS.idleRssMb },
    {
      name: `RSS growth over ${r.memory.afterRequests} req`,
      measured: `${r.memory.growthMb >= 0 ? "+" : ""}${r.memory.growthMb} MB`,
      target: `none (≤ ${TARGETS.rssGrowthToleranceMb} MB)`,
      pass: r.memory.growthMb <= TARGETS.rssGrowthToleranceMb,
    },
    { name: "usage rows = gateway 200s", measured: `${r.usage.rows} vs ${r.usage.gateway200}`, target: "equal (+ in-flight at load stop)", pass: r.usage.consistent },
  ];
}

/** Renders rows as an aligned text table. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  const line = (row: string[]) => row.map((cell, col) => cell.padEnd(widths[col]!)).join("  ").trimEnd();
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

/** The human-readable report. */
function render(r: BenchResult): string {
  const l = r.latency;
  const s = r.streaming;
  const tp = r.throughput;
  const plus = (n: number) => `${n >= 0 ? "+" : ""}${round(n, 1)}`;
  // Rows measured on all three targets: direct, bare relay, gateway, and what each hop adds.
  const compared = (figure: string, direct: number, relay: number, gateway: number) => [figure, `${direct}`, `${relay}`, `${gateway}`, plus(relay - direct), plus(gateway - direct)];
  // Rows about the gateway alone.
  const own = (figure: string, gateway: string, note = "") => [figure, "", "", gateway, "", note];
  const figures = table([
    ["figure", "direct", "bare relay", "gateway", "relay - direct", "gateway - direct"],
    compared("latency p50, c=1 (µs)", l.direct.p50Us, l.relay.p50Us, l.gateway.p50Us),
    compared("latency p99, c=1 (µs)", l.direct.p99Us, l.relay.p99Us, l.gateway.p99Us),
    compared("latency mean, c=1 (µs)", l.direct.meanUs, l.relay.meanUs, l.gateway.meanUs),
    [`req/s, c=${r.settings.concurrency} (${tp.direct.tool})`, `${tp.direct.rps}`, `${tp.relay.rps}`, `${tp.gateway.rps}`, `ratio ${round(tp.relay.rps / tp.direct.rps, 3)}`, `ratio ${tp.ratio}`],
    [`latency p50/p99 at c=${r.settings.concurrency} (ms)`, `${tp.direct.latencyP50Ms}/${tp.direct.latencyP99Ms}`, `${tp.relay.latencyP50Ms}/${tp.relay.latencyP99Ms}`, `${tp.gateway.latencyP50Ms}/${tp.gateway.latencyP99Ms}`, "", ""],
    [`non-2xx / socket errors at c=${r.settings.concurrency}`, `${tp.direct.non2xx}/${tp.direct.socketErrors}`, `${tp.relay.non2xx}/${tp.relay.socketErrors}`, `${tp.gateway.non2xx}/${tp.gateway.socketErrors}`, "", ""],
    own(`CPU cores used at c=${r.settings.concurrency} (gw, upstream, ${tp.gateway.tool})`, `${tp.gatewayCores}, ${tp.upstreamCores}, ${tp.gateway.toolCores}`),
    compared("stream TTFB p50 (µs)", s.direct.ttfbP50Us, s.relay.ttfbP50Us, s.gateway.ttfbP50Us),
    compared("stream TTFB p99 (µs)", s.direct.ttfbP99Us, s.relay.ttfbP99Us, s.gateway.ttfbP99Us),
    [
      `reads with events/stream, median (min); upstream writes ${s.upstreamWrites}`,
      `${s.direct.deliveriesMedian} (${s.direct.deliveriesMin})`,
      `${s.relay.deliveriesMedian} (${s.relay.deliveriesMin})`,
      `${s.gateway.deliveriesMedian} (${s.gateway.deliveriesMin})`,
      "",
      s.unbatched ? "unbatched: yes" : "unbatched: NO",
    ],
    ["SSE events/stream, median; max events per read", `${s.direct.eventsMedian}; ${s.direct.maxEventsPerDeliveryBeforeEnd}`, `${s.relay.eventsMedian}; ${s.relay.maxEventsPerDeliveryBeforeEnd}`, `${s.gateway.eventsMedian}; ${s.gateway.maxEventsPerDeliveryBeforeEnd}`, "", ""],
    ["median gap between reads (ms)", `${s.direct.gapMedianMs}`, `${s.relay.gapMedianMs}`, `${s.gateway.gapMedianMs}`, "", ""],
    own(
      "gateway RSS 2 s after start: files just written / from disk (MB)",
      `${r.memory.start.freshFilesMb} / ${r.memory.start.filesFromDiskMb}${r.memory.start.filesFromDisk ? "" : " (could not drop the files' pages)"}`,
    ),
    own("gateway RSS idle -> after (MB)", `${r.memory.idleMb} -> ${r.memory.afterMb} after ${r.memory.afterRequests} req`, plus(r.memory.growthMb)),
    own("RSS right after each load run (served: MB)", r.memory.samples.map((x) => `${x.served}: ${x.rssMb}`).join(", ")),
    own(`gateway RSS warm -> after ${r.memory.warm.requests} more req (MB)`, `${r.memory.afterMb} -> ${r.memory.warm.afterMb}`, plus(r.memory.warm.growthMb)),
    own(
      "usage rows vs client-counted 200s (+ other statuses)",
      `${r.usage.rows} vs ${r.usage.gateway200} (+ ${r.usage.gatewayOther})`,
      `diff ${r.usage.difference} (in-flight bound ${r.usage.inFlightBound})`,
    ),
  ]);
  const verdicts = table([["target", "measured", "wanted", "result"], ...r.targets.map((t) => [t.name, t.measured, t.target, t.pass ? "PASS" : "MISS"])]);
  const m = r.machine;
  const header = `Gateway benchmark ${r.date}${r.settings.quick ? " (--quick)" : ""}, commit ${r.commit} — ${m.cores} cores (${m.model}), load avg before ${m.loadavgBefore.join(" ")}, after ${m.loadavgAfter.join(" ")}. Gateway, upstream, load tool and client share these cores.`;
  return `${header}\n\n${figures}\n\n${verdicts}\n`;
}

/** `git rev-parse --short HEAD` (read-only), or "unknown". */
function currentCommit(): string {
  const result = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: REPO, stdout: "pipe", stderr: "ignore" });
  return result.exitCode === 0 ? result.stdout.toString().trim() : "unknown";
}

/** Runs every phase and returns the result. */
async function runBench(settings: BenchSettings): Promise<BenchResult> {
  const loadavgBefore = loadavg().map((n) => round(n, 2));
  tempDir = mkdtempSync(join(tmpdir(), "gateway-bench-"));
  const dir = tempDir;
  if (!settings.skipBuild) await buildGateway();
  const upstream = await startUpstream(settings);
  const relay = await startRelay(upstream.port);
  const install = await installGateway(dir);
  const gateway = await startGateway(install.executable, dir, join(dir, "bench.db"));
  const startMb = await settledRssMb(gateway.process.pid);
  progress(`upstream on :${upstream.port}, gateway on :${gateway.port} (pid ${gateway.process.pid})`);
  const apiKey = await setUpAccount(gateway.port, upstream.port);
  await Bun.sleep(2000);
  const idleMb = rssMb(gateway.process.pid);
  const t = targetsOf(upstream.port, relay.port, gateway.port, apiKey);
  const served = new ServedCounter();
  const latency = await phaseLatency(settings, t, served);
  const streaming = await phaseStreaming(settings, t, served);
  const { throughput, samples } = await phaseLoad(settings, t, { upstream, gateway }, served, dir);
  await Bun.sleep(2000);
  const afterMb = rssMb(gateway.process.pid);
  const afterRequests = served.total;
  const warm = await phaseWarmGrowth(settings, t.gateway, served, gateway.process.pid, afterMb, dir);
  const usage = await phaseUsage(gateway.port, served, settings.concurrency);
  const partial: Omit<BenchResult, "targets"> = {
    date: new Date().toISOString(),
    commit: currentCommit(),
    machine: { cores: cpus().length, model: cpus()[0]?.model ?? "unknown", loadavgBefore, loadavgAfter: loadavg().map((n) => round(n, 2)) },
    settings,
    loadTool: throughput.gateway.tool,
    latency,
    throughput,
    streaming,
    memory: { start: { freshFilesMb: install.freshStartMb, filesFromDiskMb: startMb, filesFromDisk: install.filesFromDisk }, idleMb, samples, afterMb, afterRequests, growthMb: round(afterMb - idleMb, 1), warm },
    usage,
  };
  return { ...partial, targets: judge(partial) };
}

/** Entry of the benchmark: run, print, write JSON, stop everything. */
async function main(): Promise<void> {
  const { client, ...settings } = readSettings(Bun.argv.slice(2));
  if (client) return clientMain();
  process.on("exit", stopEverything);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));
  const watchdog = setTimeout(() => {
    progress(`deadline of ${settings.deadlineSeconds}s passed; stopping`);
    process.exit(2);
  }, settings.deadlineSeconds * 1000);
  try {
    const result = await runBench(settings);
    console.log(render(result));
    mkdirSync(join(REPO, "dist"), { recursive: true });
    writeFileSync(join(REPO, "dist/bench-result.json"), JSON.stringify(result, null, 2) + "\n");
    progress("wrote dist/bench-result.json");
  } finally {
    clearTimeout(watchdog);
    stopEverything();
  }
}

await main();
