import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { CALLERS, expectedOf, MODELS, REMOTE_KINDS, startWorld, type CallerName, type RemoteKind, type World } from "./_support.ts";

/**
 * Issue 3 item 4, as each SDK sees it: an upstream stream cut short (ending early, or the
 * connection dropping) ends the caller's stream with that format's error event, which the
 * caller's SDK raises as its own error after the text that did arrive; never a clean end
 * that passes a truncated answer off as complete, and never a hang.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/**
 * Cuts each upstream's text stream after a few text events, before any finish. A dropped
 * connection drops once `dropWhen` settles: after the caller has seen text, so that what the
 * test asserts on does not race the reset (see LoopbackBehavior.dropWhen).
 */
function cutUpstream(kind: RemoteKind, end: "end" | "abort", dropWhen: Promise<unknown>) {
  const drop = end === "abort" ? { dropWhen } : {};
  if (kind === "openai") world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-truncated.sse", streamEnd: end, ...drop });
  // message_start, content_block_start, ping, two text deltas.
  if (kind === "anthropic") world.upstreams.anthropic.setBehavior({ cutAfterEvents: 5, streamEnd: end, ...drop });
  // Two text chunks, no finishReason.
  if (kind === "gemini") world.upstreams.gemini.setBehavior({ cutAfterEvents: 2, streamEnd: end, ...drop });
}

/**
 * Streams through `caller`'s SDK until it ends or throws; the text seen and the error.
 * `onText` is called each time more text arrives.
 */
async function streamUntilError(caller: CallerName, model: string, onText: () => void = () => {}): Promise<{ text: string; error: any }> {
  let text = "";
  const add = (delta: string) => {
    if (delta === "") return;
    text += delta;
    onText();
  };
  try {
    if (caller === "openai") {
      const stream = await world.openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
      for await (const chunk of stream) add(chunk.choices[0]?.delta.content ?? "");
    } else if (caller === "anthropic") {
      const stream = world.anthropic.messages.stream({ model, max_tokens: 128, messages: [{ role: "user", content: "Hi" }] });
      stream.on("text", add);
      await stream.finalMessage();
    } else {
      const stream = await world.genai.models.generateContentStream({ model, contents: "Hi" });
      for await (const chunk of stream) add((chunk.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? "").join(""));
    }
  } catch (error) {
    return { text, error };
  }
  return { text, error: null };
}

describe.each(CALLERS.map((c) => [c]))("caller SDK %s", (caller: CallerName) => {
  for (const kind of REMOTE_KINDS) {
    for (const end of ["end", "abort"] as const) {
      test(`${kind} upstream stream ${end === "end" ? "ends early" : "drops the connection"}: the SDK raises its error after the partial text`, async () => {
        const sawText = Promise.withResolvers<void>();
        cutUpstream(kind, end, sawText.promise);
        const { text, error } = await streamUntilError(caller, MODELS[kind], sawText.resolve);
        expect(error).not.toBeNull();
        if (caller === "openai") expect(error).toBeInstanceOf(OpenAI.APIError);
        if (caller === "anthropic") expect(error).toBeInstanceOf(Anthropic.APIError);
        if (caller === "genai") {
          expect(error).toBeInstanceOf(ApiError);
          expect(error.status).toBe(502);
          // Google's status string, which the SDK puts first in its message.
          expect(error.message).toStartWith("got status: UNAVAILABLE.");
        }
        // What arrived before the cut was delivered, and is a strict prefix of the whole answer.
        const whole = expectedOf(kind, "stream").text;
        expect(text.length).toBeGreaterThan(0);
        expect(whole.startsWith(text)).toBe(true);
        expect(text.length).toBeLessThan(whole.length);
      });
    }
  }
});

/**
 * The other side of the same line: an upstream that sent its whole answer (finish reason,
 * usage, its end event) and then dropped the connection instead of closing the body cleanly.
 * Nothing is missing, so the caller gets the complete answer with a clean end, and the usage
 * row says 200 with the upstream's usage: it is billed as the success it was.
 */
describe.each(CALLERS.map((c) => [c]))("caller SDK %s, upstream drops the connection after its last event", (caller: CallerName) => {
  for (const kind of REMOTE_KINDS) {
    test(`${kind} upstream: the complete answer ends cleanly and is billed as a success`, async () => {
      world.upstreams[kind].setBehavior({ streamEnd: "abort" });
      const before = await world.gw.admin("GET", "/v1/admin/usage?limit=1");
      const { text, error } = await streamUntilError(caller, MODELS[kind]);
      expect(error).toBeNull();
      expect(text).toBe(expectedOf(kind, "stream").text);
      const after = await world.gw.admin("GET", "/v1/admin/usage?limit=1");
      expect(after.body.total).toBe(before.body.total + 1);
      const [row] = after.body.usage;
      expect(row.status).toBe(200);
      expect(row.prompt_tokens).toBe(expectedOf(kind, "stream").inputTokens);
      expect(row.completion_tokens).toBe(expectedOf(kind, "stream").outputTokens);
    });
  }
});

/**
 * An upstream that sends a bad event and then keeps its stream open: the caller's stream
 * must end right after the error event (not when the upstream finally closes, or at the idle
 * timeout), the upstream connection must be closed, and the usage row says 502 (503 for an
 * upstream that said it is overloaded).
 */
describe("a broken event ends the stream at once, though the upstream keeps it open", () => {
  /** An SSE body that sends `events` one by one, then stays open until cancelled. */
  function streamThenHang(events: readonly string[], onCancel: () => void): Response {
    const encoder = new TextEncoder();
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < events.length) controller.enqueue(encoder.encode(events[next++]!));
        else return new Promise<void>(() => {});
      },
      cancel: onCancel,
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }

  /** Waits up to `ms` for `condition`. */
  async function eventually(condition: () => boolean, ms = 3_000): Promise<boolean> {
    for (const start = Date.now(); Date.now() - start < ms; await Bun.sleep(20)) if (condition()) return true;
    return condition();
  }

  /** The usage row of the request that got `response`. */
  async function usageRowOf(response: Response): Promise<any> {
    const requestId = response.headers.get("x-request-id");
    const listed = await world.gw.admin("GET", "/v1/admin/usage?limit=100");
    return listed.body.usage.find((row: any) => row.request_id === requestId);
  }

  const CASES = [
    {
      name: "openai caller, openai upstream: a chunk that is not JSON",
      kind: "openai" as const,
      path: "/v1/chat/completions",
      body: { model: MODELS.openai, messages: [{ role: "user", content: "Hi" }], stream: true },
      events: [
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: null }] })}\n\n`,
        "data: {not json\n\n",
      ],
      errorIn: (raw: string) => raw.includes('"error"') && raw.includes("malformed"),
      rowStatus: 502,
    },
    {
      name: "anthropic caller, anthropic upstream: its own overloaded_error event after the answer began, relayed with its type",
      kind: "anthropic" as const,
      path: "/v1/messages",
      body: { model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "Hi" }], stream: true },
      events: [
        `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`,
        `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n`,
        `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } })}\n\n`,
        `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`,
      ],
      errorIn: (raw: string) => raw.includes("event: error\n") && raw.includes('"overloaded_error"'),
      // An upstream that says it is overloaded is busy, not broken, as its 529 before the headers is.
      rowStatus: 503,
    },
  ];

  for (const c of CASES) {
    test(c.name, async () => {
      let cancelled = false;
      world.upstreams[c.kind].setBehavior({ script: () => streamThenHang(c.events, () => void (cancelled = true)) });
      const response = await world.gw.fetch(c.path, {
        method: "POST",
        headers: { authorization: `Bearer ${world.key}`, "content-type": "application/json" },
        body: JSON.stringify(c.body),
      });
      expect(response.status).toBe(200);
      const raw = await response.text();
      expect(c.errorIn(raw)).toBe(true);
      expect(raw).not.toContain("[DONE]");
      expect(await eventually(() => cancelled)).toBe(true);
      const row = await usageRowOf(response);
      expect(row.status).toBe(c.rowStatus);
    });
  }
});
