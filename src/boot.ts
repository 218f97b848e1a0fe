import type { CreateTempUpload } from "./uploads/temp-upload.ts";
import { loadConfig, type Config } from "./config.ts";
import { openDatabase, localPathOf } from "./db/open-database.ts";
import { migrate } from "./db/migrate.ts";
import { onFirstApiRequest } from "./lib/on-first-api-request.ts";
import { LEASE_IDLE_MS } from "./billing/lease-book.ts";
import { bootstrap, type FirstStart } from "./bootstrap.ts";
import { createServices } from "./services.ts";
import { createApp } from "./app.ts";
import { createJsonLogger, type Logger } from "./lib/logger.ts";
import { VERSION } from "./version.ts";
import { InstanceRegistry, type ProcessIdentity } from "./billing/instance-registry.ts";
import { checkLedger } from "./billing/check-ledger.ts";
import { IdleReclaimer, type MemoryRelease } from "./lib/idle-reclaimer.ts";
import { watchDatabaseFile, type FileIdentity } from "./db/watch-database-file.ts";

/** A listening server as the runtime reports it. */
export interface RunningServer {
  port: number;
  /** Stops accepting connections; resolves when in-flight requests have finished. */
  close(): Promise<void>;
}

/**
 * The mode of a folder the gateway creates for its database: the database holds channel keys
 * and every account's records, and a folder only its owner can enter keeps them, and the WAL
 * and temp files beside them, from other users of the machine whatever the umask.
 */
export const PRIVATE_DIRECTORY = 0o700;

/** The few things only a runtime can do; src/runtime/<name>.ts provides them. */
export interface RuntimeHost {
  env: Record<string, string | undefined>;
  /** Creates the folder (and its parents) if missing, with mode PRIVATE_DIRECTORY. */
  ensureDirectory(path: string): void;
  serve(fetch: (request: Request) => Response | Promise<Response>, options: { port: number; host: string }): Promise<RunningServer>;
  onShutdownSignal(handler: (signal: string) => void): void;
  exit(code: number): void;
  /** Writes a line to standard output. */
  write(line: string): void;
  identity: ProcessIdentity;
  /** Temp files for audio uploads. */
  createTempUpload: CreateTempUpload;
  /** Gives memory back when traffic stops; runtimes without the means leave it out. */
  memory?: MemoryRelease;
  /** See GatewayDeps.bodyErrorReason; left out, a failed body is errored with its error. */
  bodyErrorReason?(error: unknown): unknown;
  /** A file's device and inode (null when none is at the path), to see the database file removed or replaced. */
  fileIdentity?: FileIdentity;
  /**
   * The first request to the gateway's API arrived (not the admin API nor a probe). A runtime
   * that keeps its JIT reluctant until then (start-up's run-once code, the admin set-up and the
   * idle polls gain nothing from compiling) returns it to its normal policy, for the code
   * that serves.
   */
  apiTrafficBegan?(): void;
  /** The fetch that calls upstreams, where the runtime has one faster than its global fetch for some of them; left out, the global fetch. */
  upstreamFetch?: typeof fetch;
}

/**
 * How often expired kept Responses and thinking are deleted. Reads pass them by already; the
 * sweep only gives their room back, so each instance sweeping once a minute deletes a minute's worth.
 */
const KEPT_SWEEP_MS = 60_000;

/** How often the gateway checks whether traffic stopped, to give memory back (see IdleReclaimer). */
const IDLE_CHECK_MS = 500;
/** The quiet tick that also drops compiled code: after 30 s without a request. */
const SHRINK_AT_QUIET_TICK = 30_000 / IDLE_CHECK_MS;

function dirnameOf(path: string): string | null {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? null : path.slice(0, slash);
}

function firstStartBanner(first: FirstStart, config: Config, port: number): string {
  const base = `http://localhost:${port}`;
  const lines = ["", "=== Model gateway: first start ==="];
  lines.push(
    first.generatedManagementKey
      ? `Management key (shown once, keep it safe): ${first.generatedManagementKey}`
      : "Management key: the one in GATEWAY_MANAGEMENT_KEY",
  );
  if (first.demoApiKey) {
    lines.push(`Demo API key (shown once): ${first.demoApiKey}`, "Try it:");
    lines.push(
      `curl ${base}/v1/chat/completions -H "Authorization: Bearer ${first.demoApiKey}" -H "Content-Type: application/json" -d '{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}'`,
    );
  }
  lines.push(`Variant ${config.variant}; database ${config.databaseUrl}`, "");
  return lines.join("\n");
}

/**
 * The command line: `doctor`, or (no argument) serve. A failure to start (bad configuration,
 * port in use, a database newer than this code) is reported in one line, exit code 1, and so
 * is any other argument: a mistyped `doctor` must not start a second gateway.
 */
export async function main(host: RuntimeHost, args: readonly string[]): Promise<void> {
  try {
    if (args[0] === "doctor") host.exit(await runDoctor(host));
    else if (args.length > 0) throw new Error(`unknown command '${args[0]}'; 'gateway' serves, 'gateway doctor' checks the ledger`);
    else await runGateway(host);
  } catch (error) {
    host.write(`gateway: failed to start: ${error instanceof Error ? error.message : String(error)}`);
    host.exit(1);
  }
}

/**
 * `doctor`: checks that every account's ledger sums to its balance and reports open holds and
 * balance leases, after releasing those of dead instances. Prints a report; exit code 1 on any problem.
 */
export async function runDoctor(host: RuntimeHost): Promise<number> {
  const config = loadConfig(host.env);
  const database = openDatabase(config.databaseUrl, config.databaseAuthToken);
  try {
    await migrate(database.db, Date.now);
    const registry = new InstanceRegistry(database.db, host.identity, Date.now);
    const released = await registry.releaseOrphanedHolds();
    const report = await checkLedger(database.db);
    host.write(`doctor: ${report.accounts} accounts checked; ${report.problems.length} ledger mismatches; ${report.openHolds} open holds; ${report.openLeases} open balance leases; ${released} orphaned holds released`);
    for (const p of report.problems) {
      host.write(`  account ${p.userId}: balance ${p.balanceMicros} micro-USD, ledger sum ${p.ledgerSumMicros} micro-USD`);
    }
    return report.problems.length === 0 ? 0 : 1;
  } finally {
    await database.close();
  }
}

/**
 * Starts the gateway on a runtime: config, database and migrations, first-start setup,
 * services, HTTP server, and a graceful shutdown on SIGTERM/SIGINT (stop accepting, let
 * in-flight requests finish up to the drain timeout, flush writes, close the database).
 */
export async function runGateway(host: RuntimeHost): Promise<RunningServer> {
  const config = loadConfig(host.env);
  const now = () => Date.now();
  const log = createJsonLogger(host.write, now);
  const localPath = localPathOf(config.databaseUrl);
  const directory = localPath === null ? null : dirnameOf(localPath);
  if (directory) host.ensureDirectory(directory);

  const database = openDatabase(config.databaseUrl, config.databaseAuthToken);
  await migrate(database.db, now);
  const first = await bootstrap(database.db, config, now());
  database.waitForWriteLockBetweenTurns();
  const services = await createServices({ db: database.db, sql: database.sql, config, now, fetch: host.upstreamFetch ?? globalThis.fetch.bind(globalThis), log, identity: host.identity, createTempUpload: host.createTempUpload, bodyErrorReason: host.bodyErrorReason });
  services.changes.start(config.cachePollMs);
  const lastUsedTimer = setInterval(() => services.usage.flush(true).catch(() => {}), 5_000);
  const checkDatabaseFile = localPath !== null && host.fileIdentity ? watchDatabaseFile(localPath, host.fileIdentity, services.writable) : () => {};
  const heartbeatTimer = setInterval(() => {
    checkDatabaseFile();
    services.instance.heartbeat().catch(() => {});
  }, 5_000);
  const leaseTimer = setInterval(() => services.holds.closeIdleLeases().catch(() => {}), LEASE_IDLE_MS);
  const sweepKept = () => {
    void services.keptResponses.sweep().catch(() => {});
    void services.keptThinking.sweep().catch(() => {});
  };
  // At once too: what expired while no instance ran would otherwise wait a minute more.
  sweepKept();
  const keptSweepTimer = setInterval(sweepKept, KEPT_SWEEP_MS);

  const app = createApp(services);
  const { fetch: reclaiming, idleTimer } = reclaimWhenIdle(app.fetch, host.memory, log);
  const fetch = host.apiTrafficBegan ? onFirstApiRequest(reclaiming, host.apiTrafficBegan) : reclaiming;
  const server = await host.serve(fetch, { port: config.port, host: config.host }).catch((error: unknown) => {
    // The first start's keys are committed and the next start is no first start: shown now or never.
    if (first) host.write(firstStartBanner(first, config, config.port));
    throw error;
  });
  if (first) host.write(firstStartBanner(first, config, server.port));
  log.info("gateway listening", { version: VERSION, port: server.port, host: config.host, variant: config.variant });

  let stopping = false;
  host.onShutdownSignal(async (signal) => {
    if (stopping) return;
    stopping = true;
    services.draining = true;
    log.info("shutting down", { signal });
    const drained = await Promise.race([
      server.close().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), config.drainTimeoutMs)),
    ]);
    if (!drained) log.warn("drain timeout passed with requests still in flight");
    services.changes.stop();
    clearInterval(lastUsedTimer);
    clearInterval(heartbeatTimer);
    clearInterval(leaseTimer);
    clearInterval(keptSweepTimer);
    clearInterval(idleTimer);
    try {
      await services.usage.flush(true);
      await services.holds.closeIdleLeases(0);
      await services.rateExchange.retire();
      await services.instance.retire();
      await database.close();
    } catch (error) {
      log.error("shutdown flush failed", { error: String(error) });
      host.exit(1);
      return;
    }
    host.exit(0);
  });
  // What start-up compiled and left behind (migrations, the first loads of the caches) is not
  // needed again: given back before the first request (about 2 MB of idle RSS, measured on the
  // compiled executable). After the signal handlers, so a stop meanwhile still drains.
  host.memory?.shrink();
  return server;
}

/**
 * Wraps the app's fetch so an IdleReclaimer sees each request, and starts its ticks; each
 * release is logged, once per quiet spell, so an operator can tell it ran. Without `release`,
 * fetch is unchanged.
 */
function reclaimWhenIdle(
  fetch: (request: Request) => Response | Promise<Response>,
  release: MemoryRelease | undefined,
  log: Logger,
): { fetch: (request: Request) => Response | Promise<Response>; idleTimer: ReturnType<typeof setInterval> | undefined } {
  if (!release) return { fetch, idleTimer: undefined };
  const reclaimer = new IdleReclaimer(release, SHRINK_AT_QUIET_TICK);
  const idleTimer = setInterval(() => {
    const strength = reclaimer.tick();
    if (strength) log.info("memory released", { strength });
  }, IDLE_CHECK_MS);
  return {
    fetch: (request) => {
      reclaimer.noteRequest();
      return fetch(request);
    },
    idleTimer,
  };
}
