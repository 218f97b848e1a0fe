/** Deno entry: `deno task start`. */
import { createTempUpload } from "./node-temp-upload.ts";
import { fileIdentity } from "./file-identity.ts";
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
  build: { os: string };
  permissions: { querySync(descriptor: { name: "ffi" }): { state: string } };
  dlopen(path: string, symbols: typeof MALLOC_TRIM): { symbols: { malloc_trim(pad: bigint): number } };
};

const MALLOC_TRIM = { malloc_trim: { parameters: ["usize"], result: "i32" } } as const;

/**
 * glibc's malloc_trim(0) through Deno's FFI, or undefined where it cannot be had (not Linux,
 * no glibc, or run without --allow-ffi; the permission is queried, so no prompt appears).
 * Deno's own buffers come from glibc's malloc, which gives memory freed in the middle of its
 * heap back only when trimmed: after the 60 s soak (seed 2053679218) RSS stayed 65-72 MB above
 * the start once idle, the JS heap being back; with the trim, 10-18 MB. It takes about 7 ms
 * after a burst, once per quiet spell, and the next burst ran as fast.
 */
function glibcMallocTrim(): (() => void) | undefined {
  if (Deno.build.os !== "linux" || Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
  try {
    const libc = Deno.dlopen("libc.so.6", MALLOC_TRIM);
    return () => void libc.symbols.malloc_trim(0n);
  } catch {
    return undefined; // musl or another C library: nothing to trim this way
  }
}

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
  // Deno provides Node's fs module, so uploads and the database file's watch share one implementation.
  createTempUpload: () => createTempUpload(),
  fileIdentity,
  memory: v8MemoryRelease(glibcMallocTrim()),
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
