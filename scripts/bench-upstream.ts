/**
 * A fast fake OpenAI-compatible upstream for scripts/bench.ts, run as its own process:
 *
 *   bun scripts/bench-upstream.ts [--port 0] [--chunks 20] [--delay-ms 2]
 *
 * POST /v1/chat/completions answers a fixed chat.completion (usage included); with
 * `"stream": true` it sends `chunks` content chunks `delay-ms` apart, then one final write
 * holding a usage chunk and `data: [DONE]`. It listens on 127.0.0.1 only and prints
 * `listening <port>` once ready.
 */
import { parseArgs } from "node:util";

/** Options read from the command line. */
interface UpstreamOptions {
  port: number;
  chunks: number;
  delayMs: number;
}

/** The usage every answer reports. */
const USAGE = { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 };

/** The fixed non-streaming answer, serialised once. */
const COMPLETION_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "bench-model",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the bench upstream." }, finish_reason: "stop" }],
  usage: USAGE,
});

/** Reads the command line into UpstreamOptions. */
function readOptions(): UpstreamOptions {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      port: { type: "string", default: "0" },
      chunks: { type: "string", default: "20" },
      "delay-ms": { type: "string", default: "2" },
    },
  });
  return { port: Number(values.port), chunks: Number(values.chunks), delayMs: Number(values["delay-ms"]) };
}

/** One SSE `data:` event holding a chat.completion.chunk. */
function chunkEvent(delta: Record<string, string>, finishReason: string | null, usage: typeof USAGE | null): string {
  const chunk = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-model",
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The SSE texts of one stream, one entry per write; the last write carries usage and [DONE]. */
function streamWrites(chunks: number): string[] {
  const writes: string[] = [];
  for (let i = 0; i < chunks; i++) {
    const delta: Record<string, string> = i === 0 ? { role: "assistant", content: "tok0 " } : { content: `tok${i} ` };
    writes.push(chunkEvent(delta, i === chunks - 1 ? "stop" : null, null));
  }
  writes.push(chunkEvent({}, null, USAGE) + "data: [DONE]\n\n");
  return writes;
}

/** An SSE body that sends each write, flushed, `delayMs` after the previous one. */
function sseBody(writes: string[], delayMs: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next > 0) await Bun.sleep(delayMs);
      controller.enqueue(encoder.encode(writes[next]!));
      next += 1;
      if (next === writes.length) controller.close();
    },
  });
}

/** Handles one request: the chat endpoint, anything else a 404. */
async function handle(request: Request, options: UpstreamOptions, writes: string[]): Promise<Response> {
  const url = new URL(request.url);
  if (request.method !== "POST" || url.pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
  const body = (await request.json()) as { stream?: unknown };
  if (body.stream === true) {
    return new Response(sseBody(writes, options.delayMs), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }
  return new Response(COMPLETION_JSON, { headers: { "content-type": "application/json" } });
}

/** Starts the server and reports its port. */
function main(): void {
  const options = readOptions();
  const writes = streamWrites(options.chunks);
  const server = Bun.serve({
    port: options.port,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch: (request) => handle(request, options, writes),
  });
  console.log(`listening ${server.port}`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
}

main();
