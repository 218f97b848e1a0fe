/**
 * A bare relay for scripts/bench.ts, run as its own process:
 *
 *   bun scripts/bench-relay.ts --upstream <port> [--port 0]
 *
 * POST /v1/chat/completions is sent on to the fake upstream as it came and the answer piped
 * back as it comes, streamed or not: no auth, validation, billing, usage row or log. What it
 * adds over calling the upstream directly is what one more Bun HTTP hop (a Bun.serve server
 * and a fetch client) costs on this machine, the floor under any gateway that runs on Bun; the
 * bench reports it beside the gateway so the gateway's own share can be read off. It listens on
 * 127.0.0.1 only and prints `listening <port>` once ready.
 */
import { parseArgs } from "node:util";

/** Sends one request on to the upstream and answers with its status, content type and body. */
async function relay(request: Request, upstream: string): Promise<Response> {
  const url = new URL(request.url);
  if (request.method !== "POST" || url.pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
  const answer = await fetch(upstream + url.pathname, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: request.headers.get("authorization") ?? "" },
    body: await request.text(),
  });
  return new Response(answer.body, { status: answer.status, headers: { "content-type": answer.headers.get("content-type") ?? "application/json" } });
}

/** Starts the relay and reports its port. */
function main(): void {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { port: { type: "string", default: "0" }, upstream: { type: "string" } },
  });
  if (!values.upstream) throw new Error("--upstream <port> is required");
  const upstream = `http://127.0.0.1:${Number(values.upstream)}`;
  const server = Bun.serve({ port: Number(values.port), hostname: "127.0.0.1", idleTimeout: 0, fetch: (request) => relay(request, upstream) });
  console.log(`listening ${server.port}`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
}

main();
