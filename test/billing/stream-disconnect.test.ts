import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway.ts";
import { fixtureEvents, summarizeStreamFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { readUntilThenAbort, startPricedLoopback } from "./_inprocess.ts";
import { bearer, costOf, estimate, sleep, waitFor } from "./_support.ts";

/**
 * A client that disconnects from a stream: after the first content chunk, after the last
 * content chunk but before `data: [DONE]`, and before any byte. Each request gets exactly one
 * usage row and exactly one settlement of its hold, and no hold is left.
 *
 * What is charged (src/dispatch/chat-dispatcher.ts): the usage the upstream reported, when its
 * usage chunk was seen before the disconnect; otherwise the prompt's estimate plus the text
 * that passed through the gateway, at about 4 characters a token. A cancelled stream's row
 * has status 499. A disconnect before the upstream answered produces nothing and costs nothing
 * (the upstream call is aborted with the request; its row then says 502, the upstream outcome).
 */

const MODEL = "stream-model";
const PROMPT = "Tell me something streamed, slowly please.";
const MAX_TOKENS = 50;
const HOLD = costOf(estimate(PROMPT), MAX_TOKENS);
const FIXTURE = "openai-chat-stream.sse";
const FULL = summarizeStreamFixture(FIXTURE);

let gw: TestGateway;
let upstream: OpenAiUpstream;

let loopback: Awaited<ReturnType<typeof startPricedLoopback>>;

beforeAll(async () => {
  loopback = await startPricedLoopback(MODEL);
  ({ gw, upstream } = loopback);
});

afterAll(() => loopback.close());

async function newUser(): Promise<{ id: string; key: string }> {
  const user = await gw.admin("POST", "/v1/admin/users", { email: `s${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: 1 });
  const token = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "k" });
  return { id: user.body.id, key: token.body.key };
}

function startStream(key: string, controller: AbortController): Promise<Response> {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(key),
    body: JSON.stringify({ model: MODEL, stream: true, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: PROMPT }] }),
    signal: controller.signal,
  });
}

/** The content deltas of OpenAI chunks in `sse`. */
function contentOf(sse: string): string {
  let text = "";
  for (const block of sse.split("\n\n")) {
    const data = block.replace(/^data: /, "").trim();
    if (!data.startsWith("{")) continue;
    for (const choice of JSON.parse(data).choices ?? []) text += choice.delta?.content ?? "";
  }
  return text;
}

/** Waits for the request's one usage row, then checks the money side of its settlement. */
async function settledOnce(userId: string, requestId: string) {
  const db = gw.database.db;
  const row = await waitFor("the usage row", async () => (await db.selectFrom("usage_logs").selectAll().where("user_id", "=", userId).execute())[0], 3_000);
  // A second row or a second settlement would arrive late: give it the chance.
  await sleep(150);
  const rows = await db.selectFrom("usage_logs").selectAll().where("user_id", "=", userId).execute();
  expect(rows.length).toBe(1);
  expect(row.request_id).toBe(requestId);
  expect(row.stream).toBe(1);
  const ledger = await db.selectFrom("ledger").select(["kind", "amount_micros"]).where("reference", "=", requestId).orderBy("id").execute();
  const report = await checkLedger(db);
  expect(report.openHolds).toBe(0);
  expect(report.problems).toEqual([]);
  const user = await db.selectFrom("users").select(["balance_micros", "total_spent_micros"]).where("id", "=", userId).executeTakeFirstOrThrow();
  return { row, ledger, user };
}

test("(a) disconnect after the first content chunk: status 499, charged the prompt estimate plus the text streamed so far", async () => {
  upstream.setBehavior({ chunkDelayMs: 40 });
  const { id, key } = await newUser();
  const controller = new AbortController();
  const response = await startStream(key, controller);
  expect(response.status).toBe(200);
  const requestId = response.headers.get("x-request-id")!;
  const seen = await readUntilThenAbort(response, controller, (t) => contentOf(t).length > 0);
  expect(contentOf(seen)).toBe("Hello");

  const { row, ledger, user } = await settledOnce(id, requestId);
  // The upstream's usage comes in its last chunk, never reached: the prompt and the streamed text are estimated.
  expect(row.prompt_tokens).toBe(estimate(PROMPT));
  expect(row.completion_tokens).toBeGreaterThanOrEqual(estimate("Hello"));
  // At most a chunk or two beyond what the client read went through before the cancel reached the gateway.
  expect(row.completion_tokens).toBeLessThanOrEqual(estimate("Hello! Here is"));
  expect(row.cost_micros).toBe(costOf(row.prompt_tokens, row.completion_tokens));
  expect(ledger).toEqual([
    { kind: "hold", amount_micros: -HOLD },
    { kind: "settle", amount_micros: HOLD - row.cost_micros },
  ]);
  expect(user.balance_micros).toBe(1_000_000 - row.cost_micros);
  expect(user.total_spent_micros).toBe(row.cost_micros);
  // Checked last, after the money: a cancelled stream's row says 499, not 200.
  expect(row.status).toBe(499);
}, 10_000);

test("(b) disconnect after the last content chunk, before the usage chunk and [DONE]: status 499, the whole text estimated", async () => {
  // Everything up to the finish chunk at once, then a pause before the usage chunk and [DONE].
  const events = fixtureEvents(FIXTURE);
  expect(events.slice(-2)[1]).toBe("[DONE]");
  expect(JSON.parse(events.slice(-2)[0]!).usage).toBeTruthy();
  let upstreamCancelled = false;
  upstream.setBehavior({
    script: () => {
      const encoder = new TextEncoder();
      let wake: () => void = () => {};
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          for (const data of events.slice(0, -2)) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), sleep(3_000)]);
          if (upstreamCancelled) return;
          for (const data of events.slice(-2)) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
          controller.close();
        },
        cancel() {
          upstreamCancelled = true;
          wake();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  const { id, key } = await newUser();
  const controller = new AbortController();
  const response = await startStream(key, controller);
  expect(response.status).toBe(200);
  const requestId = response.headers.get("x-request-id")!;
  const seen = await readUntilThenAbort(response, controller, (t) => t.includes('"finish_reason":"stop"'));
  expect(contentOf(seen)).toBe(FULL.text);
  expect(seen).not.toContain("[DONE]");

  const { row, ledger, user } = await settledOnce(id, requestId);
  expect(row.prompt_tokens).toBe(estimate(PROMPT));
  expect(row.completion_tokens).toBe(estimate(FULL.text));
  expect(row.cost_micros).toBe(costOf(estimate(PROMPT), estimate(FULL.text)));
  expect(ledger).toEqual([
    { kind: "hold", amount_micros: -HOLD },
    { kind: "settle", amount_micros: HOLD - row.cost_micros },
  ]);
  expect(user.balance_micros).toBe(1_000_000 - row.cost_micros);
  // The gateway let go of the upstream stream too.
  await waitFor("the upstream stream cancelled", () => upstreamCancelled, 2_000);
  // Checked last, after the money: a cancelled stream's row says 499, not 200.
  expect(row.status).toBe(499);
}, 10_000);

test("(c) disconnect before any byte (upstream still thinking): nothing produced, the hold is refunded in full", async () => {
  upstream.setBehavior({ delayMs: 1_500 });
  upstream.reset();
  const { id, key } = await newUser();
  const controller = new AbortController();
  const pending = startStream(key, controller).then(
    (r) => `answered ${r.status}`,
    (e: Error) => e.name,
  );
  // The hold is taken before the upstream call: once the upstream has the request, funds are held.
  await waitFor("the upstream call", () => upstream.requests.length === 1, 3_000);
  controller.abort();
  expect(await pending).toBe("AbortError");

  const { row, ledger, user } = await settledOnce(id, await firstRequestId(id));
  console.log(`(c) usage row status for a disconnect before the first byte: ${row.status}`);
  expect(row.status).not.toBe(200);
  expect(row.prompt_tokens).toBe(0);
  expect(row.completion_tokens).toBe(0);
  expect(row.cost_micros).toBe(0);
  expect(ledger).toEqual([
    { kind: "hold", amount_micros: -HOLD },
    { kind: "refund", amount_micros: HOLD },
  ]);
  expect(user.balance_micros).toBe(1_000_000);
  expect(user.total_spent_micros).toBe(0);
}, 10_000);

/** The request id of the user's only hold (the client never saw a header to read it from). */
async function firstRequestId(userId: string): Promise<string> {
  const hold = await waitFor(
    "the hold",
    async () => gw.database.db.selectFrom("ledger").select("reference").where("user_id", "=", userId).where("kind", "=", "hold").executeTakeFirst(),
    3_000,
  );
  return hold.reference!;
}
