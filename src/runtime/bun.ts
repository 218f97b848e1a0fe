/** Bun entry: `bun src/runtime/bun.ts`, and the compiled executable. */
import { main } from "../boot.ts";
import { nodeProcessHost } from "./node-process.ts";
import type { CheckpointWorker } from "../db/wal-checkpointer.ts";

/**
 * The checkpoint worker's entry. The compiled executable carries it as a second entry point
 * (scripts/build.ts), kept under `$bunfs/root/` by its path below src/, while this module's
 * URL there names the executable itself, in that same folder.
 */
function checkpointWorkerUrl(): string {
  const compiled = import.meta.url.includes("/$bunfs/");
  return new URL(compiled ? "./db/checkpoint-worker.ts" : "../db/checkpoint-worker.ts", import.meta.url).href;
}

await main(
  {
    ...nodeProcessHost(),
    memory: {
      collect: () => Bun.gc(true),
      // JSC's shrinkFootprint after a full collection: drops compiled code and returns free
      // pages to the system; code is compiled again as traffic resumes.
      shrink: () => {
        Bun.gc(true);
        Bun.shrink();
      },
    },
    checkpointWorker: () => new Worker(checkpointWorkerUrl()) as unknown as CheckpointWorker,
    // Bun.serve prints the reason a response body is errored with as a stack trace; with none
    // it drops the connection quietly, and the gateway logs the failure as a JSON line.
    bodyErrorReason: () => undefined,
    async serve(fetch, { port, host }) {
      const server = Bun.serve({ fetch, port, hostname: host, idleTimeout: 0 });
      return { port: server.port ?? port, close: () => server.stop(false) };
    },
  },
  process.argv.slice(2),
);
