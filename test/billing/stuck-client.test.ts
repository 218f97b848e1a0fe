import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import type { TestGateway } from "../helpers/gateway.ts";
import type { OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { expectBooksBalanced, ledgerOf, newAccount, startPricedLoopback } from "./_inprocess.ts";
import { estimate, waitFor } from "./_support.ts";

/**
 * A client that stops reading a stream without hanging up pulls no more of it, so neither
 * the stream's end nor its cancel comes while it stays connected, and the server drops no
 * connection for being idle. The overall deadline (GATEWAY_UPSTREAM_TIMEOUT_MS) still ends
 * the request: the upstream is let go and the request is settled then, a 502 row charged
 * for what the upstream produced and the rest of its hold released, not when (or if) the
 * client leaves.
 */

const MODEL = "stuck-client-model";
const DEADLINE_MS = 600;
let gw: TestGateway;
let upstream: OpenAiUpstream;
let loopback: Awaited<ReturnType<typeof startPricedLoopback>>;

beforeAll(async () => {
  loopback = await startPricedLoopback(MODEL, { GATEWAY_UPSTREAM_TIMEOUT_MS: String(DEADLINE_MS) });
  ({ gw, upstream } = loopback);
});
afterAll(() => loopback.close());

/** An OpenAI stream of endless content chunks, written as fast as they are read; `cancelled` once the gateway lets go. */
function endlessStream(state: { cancelled: boolean }): Response {
  const chunk = new TextEncoder().encode(
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: MODEL, choices: [{ index: 0, delta: { content: "x".repeat(4_000) }, finish_reason: null }] })}\n\n`.repeat(16),
  );
  const body = new ReadableStream<Uint8Array>({
    pull: (controller) => controller.enqueue(chunk),
    cancel: () => void (state.cancelled = true),
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

test("a caller that stops reading mid-stream is settled at the deadline: a 502 row, its hold released, the upstream let go", async () => {
  const state = { cancelled: false };
  upstream.setBehavior({ script: () => endlessStream(state) });
  const { id, key } = await newAccount(gw, 1_000_000);
  const { port } = new URL(gw.url);
  const body = JSON.stringify({ model: MODEL, stream: true, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  const firstBytes = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await firstBytes;
  // The client reads nothing more and stays connected: the socket buffers fill, and the gateway stops pulling.
  socket.pause();
  try {
    const row = await waitFor(
      "the usage row",
      async () => (await gw.database.db.selectFrom("usage_logs").selectAll().where("user_id", "=", id).execute())[0],
      DEADLINE_MS + 2_000,
    );
    expect(row.status).toBe(502);
    expect(row.prompt_tokens).toBe(estimate("Hi"));
    // What passed through the gateway before the client's buffers filled: some megabytes of text.
    expect(row.completion_tokens).toBeGreaterThan(estimate("x".repeat(4_000)));
    expect((await ledgerOf(gw, row.request_id)).map((entry) => entry.kind)).toEqual(["hold", "settle"]);
    await expectBooksBalanced(gw);
    await waitFor("the upstream stream cancelled", () => state.cancelled, 2_000);
  } finally {
    socket.destroy();
  }
}, 10_000);
