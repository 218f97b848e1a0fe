/** Node entry, through @hono/node-server: `npm run start:node`. */
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { main, type RuntimeHost } from "../boot.ts";

const host: RuntimeHost = {
  env: process.env,
  ensureDirectory: (path) => mkdirSync(path, { recursive: true }),
  serve(fetch, { port, host }) {
    return new Promise((resolve) => {
      const server = serve({ fetch, port, hostname: host }, (info: AddressInfo) => {
        resolve({
          port: info.port,
          close: () => new Promise<void>((done) => server.close(() => done())),
        });
      });
    });
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
