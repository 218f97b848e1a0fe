/** Deno entry: `deno task start`. */
import { createTempUpload } from "./node-temp-upload.ts";
import { main, PRIVATE_DIRECTORY, type RuntimeHost } from "../boot.ts";
import { v8MemoryRelease } from "./v8-memory-release.ts";

declare const Deno: {
  env: { toObject(): Record<string, string> };
  mkdirSync(path: string, options: { recursive: boolean; mode?: number }): void;
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): never;
  hostname(): string;
  args: string[];
  pid: number;
  statSync(path: string): unknown;
};

const host: RuntimeHost = {
  env: Deno.env.toObject(),
  ensureDirectory: (path) => Deno.mkdirSync(path, { recursive: true, mode: PRIVATE_DIRECTORY }),
  async serve(fetch, { port, host }) {
    const server = Deno.serve({ port, hostname: host, onListen: () => {} }, fetch);
    return { port: server.addr.port, close: () => server.shutdown() };
  },
  onShutdownSignal(handler) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => handler(signal));
  },
  exit: (code) => Deno.exit(code),
  write: (line) => console.log(line),
  // Deno provides Node's fs module, so uploads share the one temp-file implementation.
  createTempUpload: () => createTempUpload(),
  memory: v8MemoryRelease(),
  identity: {
    host: Deno.hostname(),
    pid: Deno.pid,
    isAlive(pid) {
      // Deno cannot send signal 0; on Linux a live process has a /proc entry.
      try {
        Deno.statSync(`/proc/${pid}`);
        return true;
      } catch {
        return null;
      }
    },
  },
};

await main(host, Deno.args);
