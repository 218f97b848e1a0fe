/** Node entry, through @hono/node-server: `npm run start:node`. */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { main } from "../boot.ts";
import { nodeProcessHost } from "./node-process.ts";
import { v8MemoryRelease } from "./v8-memory-release.ts";

await main(
  {
    ...nodeProcessHost(),
    memory: v8MemoryRelease(),
    serve(fetch, { port, host }) {
      return new Promise((resolve) => {
        const server = serve({ fetch, port, hostname: host }, (info: AddressInfo) => {
          resolve({ port: info.port, close: () => new Promise<void>((done) => server.close(() => done())) });
        });
      });
    },
  },
  process.argv.slice(2),
);
