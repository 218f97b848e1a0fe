/** Bun entry: `bun src/runtime/bun.ts`, and the compiled executable. */
import { mkdirSync } from "node:fs";
import { runGateway } from "../boot.ts";

await runGateway({
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
});
