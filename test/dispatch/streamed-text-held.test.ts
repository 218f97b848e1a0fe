import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";

/**
 * What a stream's billing keeps of its text while it runs: only its length. The estimate
 * billed when an upstream reports no usage needs nothing more, and an upstream may stream
 * for as long as its deadline allows, so keeping the text held all of it in memory until
 * the stream ended: 32 MB streamed, 32 MB held.
 */

const MODEL = "long-stream-model";
const EVENT_TEXT = 32 * 1024;
const STREAMED = 32 * 1024 * 1024;

let gw: TestGateway;
let upstream: OpenAiUpstream;

beforeAll(async () => {
  gw = await startTestGateway();
  upstream = await startOpenAiUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "loopback", type: "openai", base_url: upstream.url, models: [MODEL] })).status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

/** JavaScript heap in use after a full collection. */
function liveHeapBytes(): number {
  Bun.gc(true);
  return heapStats().heapSize;
}

test("a long stream's text is counted, not held, while it runs", async () => {
  const encoder = new TextEncoder();
  let sent = 0;
  upstream.setBehavior({
    script: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          // Each event its own text (no string shared between them), made as it is pulled; then the stream stays open.
          async pull(controller) {
            if (sent >= STREAMED) return new Promise(() => {});
            const text = String(sent).padEnd(EVENT_TEXT, "t");
            sent += EVENT_TEXT;
            const chunk = { id: "chatcmpl-long", object: "chat.completion.chunk", created: 1, model: MODEL, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] };
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
  });
  const before = liveHeapBytes();
  const response = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Go on" }], stream: true }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  let received = 0;
  while (received < STREAMED) received += (await reader.read()).value!.length;
  // The stream is still open: whatever its billing keeps is alive now.
  const grown = liveHeapBytes() - before;
  await reader.cancel();
  expect(grown).toBeLessThan(STREAMED / 4);
}, 30_000);
