/** The process-level half of a RuntimeHost on runtimes with Node's process API (Bun, Node). */
import { mkdirSync } from "node:fs";
import { fileIdentity } from "./file-identity.ts";
import { hostname } from "node:os";
import { PRIVATE_DIRECTORY, type RuntimeHost } from "../boot.ts";
import { createTempUpload } from "./node-temp-upload.ts";

/** Everything but `serve`, from Node's process, fs and os modules (also what Deno uses for temp files). */
export function nodeProcessHost(): Omit<RuntimeHost, "serve"> {
  return {
    env: process.env,
    ensureDirectory: (path) => mkdirSync(path, { recursive: true, mode: PRIVATE_DIRECTORY }),
    onShutdownSignal(handler) {
      for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => handler(signal));
    },
    exit: (code) => process.exit(code),
    write: (line) => console.log(line),
    createTempUpload: () => createTempUpload(),
    fileIdentity,
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
}
