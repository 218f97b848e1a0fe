import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { account, expectBooksBalanced, newAccount } from "../billing/_inprocess.ts";
import { waitFor } from "../billing/_support.ts";

/**
 * Speech is priced per 1K characters of the text the upstream was asked to speak, and a
 * client that stops listening halfway still pays for it. One that stops reading without
 * hanging up is cut off at the overall deadline: it pays the same. The upstream here answers
 * as fast as it is read, so only the client's stall keeps the body from ending.
 */

// Long enough for the socket buffers to fill on a busy machine, so the deadline finds the gateway waiting on its reader.
const DEADLINE_MS = 1_500;
const MODEL = "stalled-tts";
const TEXT = "Hello there, this is a sentence to speak. ".repeat(50); // 2,100 characters
const START = 10_000_000;
// 256 MiB of audio in all: far more than the socket buffers between the gateway and a client
// that stopped reading take (about 12 MiB here, receive buffers grow to 32 MiB), so the body
// cannot end before the deadline.
const PIECES = 4096;
let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
const sent = { pieces: 0, cancelled: false };

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.text();
      const piece = new Uint8Array(64 * 1024).fill(0x55);
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent.pieces >= PIECES) return controller.close();
          sent.pieces++;
          controller.enqueue(piece);
        },
        cancel: () => void (sent.cancelled = true),
      });
      return new Response(body, { headers: { "content-type": "audio/mpeg" } });
    },
  });
  gw = await startTestGateway({ strictPricing: true, env: { GATEWAY_UPSTREAM_TIMEOUT_MS: String(DEADLINE_MS) } });
  expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "speech", per_1k_characters: 1 })).status).toBe(200);
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "tts", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: "sk-tts", models: [MODEL] })).status).toBe(201);
});

afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});

test("a client that stops reading speech without hanging up is cut off at the deadline and still pays for the whole text", async () => {
  const { id, key } = await newAccount(gw, START);
  const body = JSON.stringify({ model: MODEL, input: TEXT });
  const socket = connect(Number(new URL(gw.url).port), "127.0.0.1");
  socket.on("error", () => {});
  const firstBytes = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  socket.write(`POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  await firstBytes;
  socket.pause();
  try {
    const row = await waitFor("the usage row", async () => (await gw.database.db.selectFrom("usage_logs").selectAll().where("user_id", "=", id).execute())[0], DEADLINE_MS + 3_000);
    expect(sent.pieces).toBeLessThan(PIECES);
    await waitFor("the upstream let go", async () => sent.cancelled, 3_000);
    // 1 USD per 1K characters: 1,000 micro-USD a character.
    const cost = TEXT.length * 1_000;
    expect({ status: row.status, cost: row.cost_micros, balance: (await account(gw, id)).balance_micros }).toEqual({ status: 502, cost, balance: START - cost });
    await expectBooksBalanced(gw);
  } finally {
    socket.destroy();
  }
}, 10_000);
