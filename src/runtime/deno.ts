/** Deno entry: `deno task start`. */
import { runGateway } from "../boot.ts";

declare const Deno: {
  env: { toObject(): Record<string, string> };
  mkdirSync(path: string, options: { recursive: boolean }): void;
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  addSignalListener(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): never;
};

await runGateway({
  env: Deno.env.toObject(),
  ensureDirectory: (path) => Deno.mkdirSync(path, { recursive: true }),
  async serve(fetch, { port, host }) {
    const server = Deno.serve({ port, hostname: host, onListen: () => {} }, fetch);
    return { port: server.addr.port, close: () => server.shutdown() };
  },
  onShutdownSignal(handler) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => handler(signal));
  },
  exit: (code) => Deno.exit(code),
  write: (line) => console.log(line),
});
