import type { KyselyPlugin } from "kysely";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";
import { createSocketFetch } from "../../src/runtime/socket-fetch/socket-fetch.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/config.ts";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { WRITE_LOCK_WAIT_MS, waitForWriteLockBetweenTurns } from "../../src/db/write-lock-wait.ts";
import { bootstrap } from "../../src/bootstrap.ts";
import { createServices, type Services } from "../../src/services.ts";
import { createApp } from "../../src/app.ts";
import { silentLogger, type Logger } from "../../src/lib/logger.ts";
import type { ProcessIdentity } from "../../src/billing/instance-registry.ts";

export { bearer } from "./common.ts";

/** A management key tests pass as GATEWAY_MANAGEMENT_KEY. */
export const TEST_MANAGEMENT_KEY = "mk-gw-test-management-key-0123456789";

export interface TestGateway {
  /** Base URL of the gateway on loopback, e.g. http://127.0.0.1:41234 */
  url: string;
  services: Services;
  /** The app the server serves, for `app.request` where a test must read a body as the gateway makes it. */
  app: ReturnType<typeof createApp>;
  config: Config;
  database: OpenDatabase;
  /** The demo API key (all permissions, demo balance, `mock` channel with demo-chat). */
  demoKey: string;
  managementKey: string;
  dir: string;
  /** fetch against the gateway with a path, e.g. `gw.fetch("/v1/models", {headers})`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Calls the admin API with the management key; JSON in and out. */
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  /** Stops the server and closes the database; `keepFiles` leaves the folder for a restart. */
  close(options?: { keepFiles?: boolean }): Promise<void>;
}

export interface TestGatewayOptions {
  env?: Record<string, string>;
  /** Reuse a folder (restart tests); a new temp folder otherwise. */
  dir?: string;
  now?: () => number;
  /** The upstreams' fetch; by default the one the Bun runtime gives the gateway (socket-fetch.ts, falling back to fetch). */
  fetch?: typeof fetch;
  log?: Logger;
  /** Keep the shipped default of refusing models without a price (tests of pricing itself). */
  strictPricing?: boolean;
  identity?: ProcessIdentity;
  /** Kysely plugins on the services' database (a QueryLog), not on `database.db`. */
  plugins?: KyselyPlugin[];
}

let nextFakePid = 1_000_000;

/**
 * Starts the real app over real HTTP on loopback with a real database file in a temp folder,
 * through the same steps as a runtime start (migrate, bootstrap, services).
 */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "gateway-test-"));
  const config = loadConfig({
    DATABASE_URL: `file:${join(dir, "gateway.db")}`,
    GATEWAY_MANAGEMENT_KEY: TEST_MANAGEMENT_KEY,
    ...options.env,
  });
  const now = options.now ?? (() => Date.now());
  const database = openDatabase(config.databaseUrl);
  await migrate(database.db, now);
  const first = await bootstrap(database.db, config, now());
  database.waitForWriteLockBetweenTurns();
  // Gateways in one test process must not take each other for a predecessor with the same pid.
  const identity = options.identity ?? { host: "test-host", pid: nextFakePid++, isAlive: () => null };
  // Served by Bun.serve below, so a failed body is errored as the Bun runtime's host does it.
  const db = (options.plugins ?? []).reduce((plugged, plugin) => plugged.withPlugin(plugin), database.db);
  // A plugged instance is another Kysely: its writes must wait for the lock as the database's do.
  if (db !== database.db) waitForWriteLockBetweenTurns(db, WRITE_LOCK_WAIT_MS);
  const upstreams = createSocketFetch(fetch, {});
  const services = await createServices({ db, sql: database.sql, config, now, fetch: options.fetch ?? upstreams.fetch, log: options.log ?? silentLogger, identity, createTempUpload: () => createTempUpload(), bodyErrorReason: () => undefined });
  // The demo user is on the free plan (10 requests a minute); tests share its key for far more.
  await services.changes.commit({ kind: "all" }, (trx) => trx.updateTable("users").set({ plan: "enterprise" }).where("email", "=", "demo@gateway.local").execute());
  // Tests route to ad-hoc upstream model IDs; pricing tests opt back into the strict default.
  if (!options.strictPricing && !services.settings.current.allow_unpriced_models) {
    await services.changes.commit({ kind: "settings" }, (trx) => services.settings.update(trx, (stored) => ({ ...stored, allow_unpriced_models: true })));
  }
  const app = createApp(services);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch, idleTimeout: 0 });
  const url = `http://127.0.0.1:${server.port}`;
  const gw: TestGateway = {
    url,
    services,
    app,
    config,
    database,
    demoKey: first?.demoApiKey ?? "",
    managementKey: TEST_MANAGEMENT_KEY,
    dir,
    fetch: (path, init) => fetch(url + path, init),
    async admin(method, path, body, headers = {}) {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${TEST_MANAGEMENT_KEY}`, "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
    },
    async close({ keepFiles = false } = {}) {
      await server.stop(true);
      upstreams.closeIdle();
      services.changes.stop();
      await services.usage.flush(true);
      await database.close();
      if (!keepFiles && !options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return gw;
}
