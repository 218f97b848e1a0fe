import { afterEach, beforeEach } from "bun:test";
import { Database as SqliteReader } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { bearer, sleep } from "../helpers/common.ts";
import { gatewayCommand, REPO_ROOT } from "../helpers/runtimes.ts";

export { bearer, sleep } from "../helpers/common.ts";

/**
 * Shared helpers of the billing tests: real gateway processes (`bun src/runtime/bun.ts`) on
 * loopback sharing one database file, the doctor CLI, a read-only look into the database
 * file, and small request builders. Everything here is bounded in time.
 */

export { REPO_ROOT } from "../helpers/runtimes.ts";
/** The key given to every spawned process as GATEWAY_MANAGEMENT_KEY. */
export const PROCESS_MANAGEMENT_KEY = "mk-billing-process-key-0123456789abcdef";

/** Polls `probe` until it returns a truthy value; throws after `timeoutMs` with `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T> | T, timeoutMs = 5_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(everyMs);
  }
}

/** Waits until `gw` serves `model` (its channel and price) and knows `key`, all set up through another instance. */
export async function waitUntilServing(gw: GatewayProcess, model: string, key: string): Promise<void> {
  await waitFor("the channel on every instance", async () => (await gw.admin("GET", "/v1/admin/channels")).body.channels.some((c: any) => c.models.includes(model)));
  await waitFor("the price on every instance", async () => (await gw.admin("GET", "/v1/admin/prices")).body.prices.some((p: any) => p.model === model));
  await waitFor("the key on every instance", async () => (await gw.fetch("/v1/balance", { headers: bearer(key) })).status === 200);
}

/** The environment of a spawned gateway: the test's own minus any GATEWAY_/DATABASE_ settings. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith("GATEWAY_") || name.startsWith("DATABASE_") || name === "PORT" || name === "HOST") continue;
    env[name] = value;
  }
  return env;
}

export interface GatewayProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  pid: number;
  port: number;
  url: string;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`); returns the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL; resolves when the process is gone. */
  kill9(): Promise<void>;
}

const spawned = new Set<Subprocess>();

/** Kills (SIGKILL) every process these helpers started that is still running. For afterAll. */
export async function killAllSpawned(): Promise<void> {
  for (const proc of spawned) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await Promise.race([proc.exited, sleep(3_000)]);
  }
  spawned.clear();
}

async function collect(stream: ReadableStream<Uint8Array>, sink: { text: string }, onText: () => void): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) {
      sink.text += decoder.decode(chunk, { stream: true });
      onText();
    }
  } catch {
    // the process died: what was read stays in `sink`
  }
}

/**
 * Starts `bun src/runtime/bun.ts` (or `command`, another way to start the gateway) on 127.0.0.1
 * with an OS-chosen port (PORT=0) and a database file in `dir`; resolves once it logged
 * "gateway listening" (its port is read from that line).
 */
export async function spawnGateway(dir: string, env: Record<string, string> = {}, timeoutMs = 15_000, command = gatewayCommand("bun")): Promise<GatewayProcess> {
  const proc = Bun.spawn(command, {
    cwd: REPO_ROOT,
    env: {
      ...baseEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: `file:${join(dir, "gateway.db")}`,
      GATEWAY_MANAGEMENT_KEY: PROCESS_MANAGEMENT_KEY,
      GATEWAY_DEMO: "0",
      GATEWAY_CACHE_POLL_MS: "100",
      GATEWAY_DRAIN_TIMEOUT_MS: "3000",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  spawned.add(proc);
  const sink = { text: "" };
  let portFound: (port: number) => void = () => {};
  let found = false;
  const listening = new Promise<number>((resolve) => (portFound = resolve));
  // Only until the port is known: a long-running process (the soak) logs a line per request.
  const look = () => {
    if (found) return;
    for (const line of sink.text.split("\n")) {
      if (!line.includes("gateway listening")) continue;
      try {
        const port = Number(JSON.parse(line).port);
        if (port > 0) {
          found = true;
          portFound(port);
        }
      } catch {
        // a partial line: read again when more arrives
      }
    }
  };
  void collect(proc.stdout, sink, look);
  void collect(proc.stderr, sink, () => {});
  const port = await Promise.race([
    listening,
    proc.exited.then((code) => {
      throw new Error(`gateway process exited with ${code} before listening:\n${sink.text}`);
    }),
    sleep(timeoutMs).then(() => {
      throw new Error(`gateway process did not listen within ${timeoutMs} ms:\n${sink.text}`);
    }),
  ]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor("GET /health", async () => (await fetch(`${url}/health`)).ok, 5_000);
  return {
    proc,
    pid: proc.pid,
    port,
    url,
    output: () => sink.text,
    fetch: (path, init) => fetch(url + path, init),
    async admin(method, path, body) {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${PROCESS_MANAGEMENT_KEY}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    async stop(stopTimeoutMs = 8_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill("SIGTERM");
      const code = await Promise.race([proc.exited, sleep(stopTimeoutMs).then(() => "timeout" as const)]);
      if (code === "timeout") {
        proc.kill("SIGKILL");
        await proc.exited;
        return null;
      }
      return code;
    },
    async kill9() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** Two gateway processes sharing one database file in a new folder. */
export interface ProcessPair {
  dir: string;
  a: GatewayProcess;
  b: GatewayProcess;
}

/**
 * Gives each test of the file a new ProcessPair, started before it and killed (with its
 * folder removed) after it. Read the pair's fields inside the tests: they change each test.
 */
export function processPairEachTest(folderPrefix: string): ProcessPair {
  const pair = {} as ProcessPair;
  beforeEach(async () => {
    pair.dir = mkdtempSync(join(tmpdir(), folderPrefix));
    pair.a = await spawnGateway(pair.dir);
    pair.b = await spawnGateway(pair.dir);
  }, 30_000);
  afterEach(async () => {
    await killAllSpawned();
    rmSync(pair.dir, { recursive: true, force: true });
  });
  return pair;
}

/**
 * Runs `bun src/runtime/bun.ts <args>` against the database in `dir` until it exits, with
 * `env` over the test's own; SIGKILL after `timeoutMs` (exit code null then).
 */
export async function runCli(dir: string, args: string[], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<{ code: number | null; stdout: string }> {
  const proc = Bun.spawn([...gatewayCommand("bun"), ...args], {
    cwd: REPO_ROOT,
    env: { ...baseEnv(), DATABASE_URL: `file:${join(dir, "gateway.db")}`, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  spawned.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  spawned.delete(proc);
  return { code: proc.signalCode === null ? code : null, stdout: stdout + stderr };
}

/** Runs the doctor CLI against the database in `dir`; bounded by `timeoutMs`. */
export function runDoctorCli(dir: string, timeoutMs = 15_000): Promise<{ code: number | null; stdout: string }> {
  return runCli(dir, ["doctor"], {}, timeoutMs);
}

/** Opens the database file of `dir` read-only (bun:sqlite), independent of the gateway's code. */
export function openReadOnly(dir: string): SqliteReader {
  const db = new SqliteReader(join(dir, "gateway.db"), { readonly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

/** The money facts of one account, straight from the tables. */
export function accountBooks(db: SqliteReader, userId: string) {
  const user = db.query("select balance_micros, total_spent_micros from users where id = ?").get(userId) as { balance_micros: number; total_spent_micros: number };
  const ledger = db.query("select coalesce(sum(amount_micros), 0) as sum, min(balance_after_micros) as min_after, count(*) as n from ledger where user_id = ?").get(userId) as { sum: number; min_after: number | null; n: number };
  const holds = (db.query("select count(*) as n from holds where user_id = ?").get(userId) as { n: number }).n;
  return { balance: user.balance_micros, spent: user.total_spent_micros, ledgerSum: ledger.sum, minBalanceAfter: ledger.min_after, ledgerRows: ledger.n, openHolds: holds };
}

/** Price used throughout: 3 USD per 1M input tokens, 15 USD per 1M output tokens = 3 and 15 micro-USD a token. */
export const INPUT_MICROS_PER_TOKEN = 3;
export const OUTPUT_MICROS_PER_TOKEN = 15;
export const PRICE_BODY = { input_per_million: 3, output_per_million: 15 };

/** The gateway's documented token estimate (about 4 characters a token), written out independently. */
export const estimate = (text: string) => (text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4)));

/** Cost in micro-USD of a usage at PRICE_BODY. */
export const costOf = (inputTokens: number, outputTokens: number) => inputTokens * INPUT_MICROS_PER_TOKEN + outputTokens * OUTPUT_MICROS_PER_TOKEN;

/**
 * A request to the built-in mock model that costs exactly its hold: the mock echoes a prompt
 * longer than max_tokens words and is cut at max_tokens, reporting the prompt's own estimate
 * as input tokens, so usage == (estimate(prompt), max_tokens) == the hold's assumption.
 */
export const EXACT_PROMPT = "please repeat after me a sentence that is long enough to be cut";
export const EXACT_MAX_TOKENS = 5;
export function exactCostBody(model: string) {
  return { model, max_tokens: EXACT_MAX_TOKENS, messages: [{ role: "user", content: EXACT_PROMPT }] };
}
export const EXACT_COST_MICROS = costOf(estimate(EXACT_PROMPT), EXACT_MAX_TOKENS);
