import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";

/**
 * GATEWAY_BODY_TIMEOUT_MS: a client that holds its request body back holds nothing of the
 * gateway's for longer. A JSON body must come whole within it, an upload may pause no longer
 * than it; past it the answer is a 408 in the caller format's error shape, no upstream is
 * called, no usage row is written, and the gateway closes the connection.
 */

// Pauses the served cases make are a sixth of it: wide enough for a loaded machine.
const TIMEOUT_MS = 600;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ env: { GATEWAY_BODY_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(() => gw.close());

/** One step of a raw request: bytes to write, after a pause. */
type Step = { afterMs?: number; write: string | Uint8Array };

/**
 * Writes a request over a raw socket step by step and reads what comes back until the gateway
 * closes the connection (or 5 s pass): its status, its JSON body, and whether it was closed.
 */
async function rawExchange(steps: Step[]): Promise<{ status: number; body: { error?: Record<string, unknown> } & Record<string, unknown>; closed: boolean }> {
  const { hostname, port } = new URL(gw.url);
  const closed = Promise.withResolvers<void>();
  let received = "";
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: { data: (_, data) => void (received += new TextDecoder().decode(data)), close: () => closed.resolve() },
  });
  for (const { afterMs, write } of steps) {
    if (afterMs) await Bun.sleep(afterMs);
    socket.write(write);
  }
  const wasClosed = await Promise.race([closed.promise.then(() => true), Bun.sleep(5_000).then(() => false)]);
  socket.end();
  const [head, body] = received.split("\r\n\r\n", 2) as [string, string];
  // A chunked answer's body is its one chunk here: what lies between the size line and the next CRLF.
  const json = head.toLowerCase().includes("transfer-encoding: chunked") ? body.split("\r\n")[1]! : body;
  return { status: Number(head.split(" ")[1]), body: JSON.parse(json), closed: wasClosed };
}

const usageRows = () => gw.database.sql.get<{ n: number }>("SELECT count(*) AS n FROM usage_logs", [])!.n;

const headOf = (path: string, framing: string, contentType = "application/json") =>
  `POST ${path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${gw.demoKey}\r\nContent-Type: ${contentType}\r\n${framing}\r\n`;

const CHAT = JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hello there" }] });

for (const [framing, head, firstPart] of [
  ["Content-Length", `Content-Length: ${CHAT.length}\r\n`, CHAT.slice(0, 20)],
  ["chunked", "Transfer-Encoding: chunked\r\n", `14\r\n${CHAT.slice(0, 20)}\r\n`],
] as const) {
  test(`a JSON body (${framing}) not whole within the limit is a 408, the connection closed, nothing served`, async () => {
    const rows = usageRows();
    const answer = await rawExchange([{ write: headOf("/v1/chat/completions", head) + firstPart }]);
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ type: "request_timeout", code: 408 });
    expect(String(answer.body.error!.message)).toContain(`${TIMEOUT_MS} ms`);
    expect(answer.closed).toBe(true);
    expect(usageRows()).toBe(rows);
  });
}

const hex = (text: string) => text.length.toString(16);
for (const [framing, head, pieces] of [
  ["Content-Length", `Content-Length: ${CHAT.length}\r\n`, [CHAT.slice(0, 20), CHAT.slice(20)]],
  ["chunked", "Transfer-Encoding: chunked\r\n", [`14\r\n${CHAT.slice(0, 20)}\r\n`, `${hex(CHAT.slice(20))}\r\n${CHAT.slice(20)}\r\n0\r\n\r\n`]],
] as const) {
  test(`a JSON body (${framing}) that comes whole within the limit, in pieces, is served`, async () => {
    const answer = await rawExchange([
      { write: headOf("/v1/chat/completions", `${head}Connection: close\r\n`) + pieces[0] },
      { afterMs: TIMEOUT_MS / 6, write: pieces[1] },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body.object).toBe("chat.completion");
  });
}

test("a Gemini caller's stalled body is Google's DEADLINE_EXCEEDED", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
  const answer = await rawExchange([{ write: headOf("/v1beta/models/demo-chat:generateContent", `Content-Length: ${body.length}\r\n`) + body.slice(0, 10) }]);
  expect(answer.status).toBe(408);
  expect(answer.body.error).toMatchObject({ status: "DEADLINE_EXCEEDED", code: 408 });
});

const BOUNDARY = "body-timeout-boundary";
const WAV = encodeWav(new Int16Array(16_000), 16_000);
/** A transcription form whose file arrives in `pieces`, `pauseMs` apart. */
function uploadSteps(pieces: number, pauseMs: number, stopAfter = pieces): Step[] {
  const start = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\ndemo-transcribe\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
  const end = `\r\n--${BOUNDARY}--\r\n`;
  const length = start.length + WAV.length + end.length;
  const head = headOf("/v1/audio/transcriptions", `Content-Length: ${length}\r\nConnection: close\r\n`, `multipart/form-data; boundary=${BOUNDARY}`);
  const size = Math.ceil(WAV.length / pieces);
  const steps: Step[] = [{ write: head + start }];
  for (let i = 0; i < stopAfter; i++) steps.push({ afterMs: pauseMs, write: WAV.subarray(i * size, (i + 1) * size) });
  if (stopAfter === pieces) steps.push({ write: end });
  return steps;
}

test("an upload that never pauses past the limit is served, though it takes longer than the limit", async () => {
  const answer = await rawExchange(uploadSteps(8, TIMEOUT_MS / 6));
  expect(answer.status).toBe(200);
  expect(typeof answer.body.text).toBe("string");
});

test("an upload that pauses past the limit is a 408, the connection closed, nothing served", async () => {
  const rows = usageRows();
  const answer = await rawExchange(uploadSteps(8, 10, 3));
  expect(answer.status).toBe(408);
  expect(answer.body.error).toMatchObject({ type: "request_timeout", code: 408 });
  expect(answer.closed).toBe(true);
  expect(usageRows()).toBe(rows);
});
