import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createJsonLogger } from "../../src/lib/logger.ts";

/** A client that hangs up halfway through its request body is its own doing: no "unhandled error" in the log. */

let gw: TestGateway;
const lines: string[] = [];
beforeAll(async () => {
  gw = await startTestGateway({ log: createJsonLogger((line) => lines.push(line), Date.now) });
});
afterAll(() => gw.close());

// Content-Length bodies are read by the route; chunked ones by the body-limit middleware, which counts them.
for (const [framing, head] of [
  ["Content-Length", "Content-Length: 400\r\n\r\n"],
  ["chunked", "Transfer-Encoding: chunked\r\n\r\n40\r\n"],
] as const) {
  test(`a JSON body (${framing}) cut off by the client is not logged as the gateway's error`, async () => {
    const { port, hostname } = new URL(gw.url);
    const closed = Promise.withResolvers<void>();
    const socket = await Bun.connect({ hostname, port: Number(port), socket: { data() {}, close: () => closed.resolve() } });
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${gw.demoKey}\r\n` +
        `Content-Type: application/json\r\n${head}{"model":"demo-chat","messages":[`,
    );
    await Bun.sleep(50);
    socket.end();
    await closed.promise;
    // The gateway may notice the hang-up a moment later; a healthy request after it is served.
    const after = await gw.fetch("/health");
    expect(after.status).toBe(200);
    await Bun.sleep(100);
    expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
}
