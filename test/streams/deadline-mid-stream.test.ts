import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { fixtureEvents, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { bearer } from "../helpers/common.ts";
import { waitFor } from "../billing/_support.ts";

/**
 * The overall deadline aborts a stream's upstream read: that is the gateway ending the
 * stream, not the upstream closing it. A stream already past its finish chunk but still
 * owing its usage chunk and `[DONE]` must end with the error event and a 502 row, not pass
 * for a complete answer (a broken connection ends a body like a close; an abort must not).
 */

const MODEL = "deadline-model";
let gw: TestGateway;
let upstream: OpenAiUpstream;

beforeAll(async () => {
  gw = await startTestGateway({ env: { GATEWAY_UPSTREAM_TIMEOUT_MS: "400" } });
  upstream = await startOpenAiUpstream();
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "loopback", type: "openai", base_url: upstream.url, models: [MODEL] })).status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

test("a stream that stalls after its finish chunk until the deadline ends with the error event, and its row says 502", async () => {
  const events = fixtureEvents("openai-chat-stream.sse");
  expect(events.at(-1)).toBe("[DONE]");
  let cancelled = false;
  upstream.setBehavior({
    script: () => {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // Everything up to the finish chunk; the usage chunk and [DONE] never come.
          for (const data of events.slice(0, -2)) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
        },
        cancel() {
          cancelled = true;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  const response = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hi" }], stream: true }),
  });
  expect(response.status).toBe(200);
  const raw = await response.text();
  expect(raw).toContain('"finish_reason":"stop"');
  expect(raw).toContain('"type":"upstream_error"');
  expect(raw).not.toContain("[DONE]");
  const requestId = response.headers.get("x-request-id");
  const row = await gw.database.db.selectFrom("usage_logs").selectAll().where("request_id", "=", requestId).executeTakeFirstOrThrow();
  expect(row.status).toBe(502);
  // The deadline aborted the upstream call; the upstream's server learns of it on its own time.
  await waitFor("the upstream stream cancelled", () => cancelled, 2_000);
});
