import { join } from "node:path";
import type { RuntimeHost } from "../../src/boot.ts";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";

/** A gateway started by runGateway in this process, and the means to stop it as a signal would. */
export interface HostedGateway {
  host: RuntimeHost;
  /** Sends the shutdown signal; resolves with the exit code the gateway gives once it has stopped. */
  shutdown(): Promise<number>;
}

/**
 * A RuntimeHost for runGateway in a test: Bun.serve on a free loopback port, a database file in
 * `dir`, no demo key, and the shutdown signal and exit kept for the test. `overrides` replace
 * its parts (a `memory` release, another write).
 */
export function testRuntimeHost(dir: string, overrides: Partial<RuntimeHost> = {}): HostedGateway {
  let signal: ((name: string) => void) | undefined;
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const host: RuntimeHost = {
    env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "g.db")}`, GATEWAY_DEMO: "0", GATEWAY_MANAGEMENT_KEY: "mk-gw-host-test-key-0123456789" },
    ensureDirectory: () => {},
    async serve(fetch, { port, host: hostname }) {
      const server = Bun.serve({ fetch, port, hostname });
      return { port: server.port ?? port, close: async () => void (await server.stop(true)) };
    },
    onShutdownSignal: (handler) => (signal = handler),
    exit: (code) => exited(code),
    write: () => {},
    identity: { host: "test", pid: process.pid, isAlive: () => true },
    createTempUpload: () => createTempUpload(),
    ...overrides,
  };
  return {
    host,
    shutdown() {
      signal?.("SIGTERM");
      return exit;
    },
  };
}
