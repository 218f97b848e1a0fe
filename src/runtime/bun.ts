/** Bun entry: `bun src/runtime/bun.ts`, and the compiled executable. */
import { main } from "../boot.ts";
import { nodeProcessHost } from "./node-process.ts";
import { createSocketFetch } from "./socket-fetch/socket-fetch.ts";

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
    // The executable starts with its JIT reluctant to compile (JIT_POLICY_UNTIL_TRAFFIC in
    // scripts/build.ts); the API's traffic gets the normal policy.
    apiTrafficBegan: () => Bun.unsafe.setJITPolicy(1),
    // Bun.serve prints the reason a response body is errored with as a stack trace; with none
    // it drops the connection quietly, and the gateway logs the failure as a JSON line.
    bodyErrorReason: () => undefined,
    upstreamFetch: createSocketFetch(globalThis.fetch.bind(globalThis), process.env).fetch,
    async serve(fetch, { port, host }) {
      const server = Bun.serve({ fetch, port, hostname: host, idleTimeout: 0 });
      return { port: server.port ?? port, close: () => server.stop(false) };
    },
  },
  process.argv.slice(2),
);
