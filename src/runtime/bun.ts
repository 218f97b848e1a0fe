/** Bun entry: `bun src/runtime/bun.ts`, and the compiled executable. */
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { main, type RuntimeHost } from "../boot.ts";

const host: RuntimeHost = {
  env: process.env,
  ensureDirectory: (path) => mkdirSync(path, { recursive: true }),
  async serve(fetch, { port, host }) {
    const server = Bun.serve({ fetch, port, hostname: host, idleTimeout: 0 });
    return { port: server.port ?? port, close: () => server.stop(false) };
  },
  onShutdownSignal(handler) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => handler(signal));
  },
  exit: (code) => process.exit(code),
  write: (line) => console.log(line),
  identity: {
    host: hostname(),
    pid: process.pid,
    isAlive(pid) {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        // EPERM: it exists but belongs to another user.
        return (error as { code?: string }).code === "EPERM";
      }
    },
  },
};

await main(host, process.argv.slice(2));
