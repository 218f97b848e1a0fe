import { describe, expect, test } from "bun:test";
import type { StreamPart } from "../../src/canonical/chat.ts";
import type { BatchSource } from "../../src/streams/batch-source.ts";
import { superviseUpstream } from "../../src/streams/supervise-upstream.ts";
import { readSseBody } from "../../src/streams/sse.ts";
import { UpstreamError } from "../../src/upstreams/upstream-error.ts";

/** No bound on an event's size: these tests are about parsing, not about the limit. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** A source that answers reads from `script` (a batch, null, a rejection, or never), recording cancels. */
function scripted(script: (Array<StreamPart[] | null | Error | "never">)) {
  const cancels: unknown[] = [];
  let next = 0;
  const source: BatchSource<StreamPart> = {
    read() {
      const step = script[next++] ?? null;
      if (step === "never") return new Promise(() => {});
      if (step instanceof Error) return Promise.reject(step);
      return Promise.resolve(step);
    },
    async cancel(reason) {
      cancels.push(reason);
    },
  };
  return { source, cancels };
}

const text = (t: string): StreamPart => ({ type: "text-delta", text: t });

describe("superviseUpstream", () => {
  test("passes batches through and ends with the source", async () => {
    const { source, cancels } = scripted([[text("a")], [text("b"), text("c")], null]);
    const supervised = superviseUpstream(source, 1_000);
    expect(await supervised.read()).toEqual([text("a")]);
    expect(await supervised.read()).toEqual([text("b"), text("c")]);
    expect(await supervised.read()).toBeNull();
    expect(cancels).toEqual([]);
  });

  test("silence longer than the idle timeout gives an error part, cancels the upstream and ends", async () => {
    const { source, cancels } = scripted([[text("a")], "never"]);
    const supervised = superviseUpstream(source, 30);
    await supervised.read();
    const batch = await supervised.read();
    expect(batch).toEqual([{ type: "error", message: "the upstream sent nothing for 30 ms", timedOut: true }]);
    expect(cancels).toEqual(["idle timeout"]);
    expect(await supervised.read()).toBeNull();
  });

  test("a batch with an error part is passed on, then the upstream is cancelled and nothing more is read", async () => {
    const failing: StreamPart[] = [text("a"), { type: "error", message: "bad event" }];
    const { source, cancels } = scripted([failing, [text("never read")]]);
    const supervised = superviseUpstream(source, 1_000);
    expect(await supervised.read()).toEqual(failing);
    expect(cancels).toEqual(["upstream stream failed"]);
    expect(await supervised.read()).toBeNull();
  });

  test("a failed read becomes an error part and the upstream is cancelled", async () => {
    const { source, cancels } = scripted([new Error("connection reset")]);
    const supervised = superviseUpstream(source, 1_000);
    expect(await supervised.read()).toEqual([{ type: "error", message: "the upstream connection failed mid-stream" }]);
    expect(cancels).toEqual(["upstream connection failed"]);
    expect(await supervised.read()).toBeNull();
  });

  test("a read that rejected with an UpstreamError (a step found the upstream at fault) gives that error's message", async () => {
    const { source, cancels } = scripted([[text("a")], new UpstreamError("protocol", "the upstream sent an event larger than the limit")]);
    const supervised = superviseUpstream(source, 1_000);
    await supervised.read();
    expect(await supervised.read()).toEqual([{ type: "error", message: "the upstream sent an event larger than the limit" }]);
    expect(cancels).toHaveLength(1);
    expect(await supervised.read()).toBeNull();
  });

  test("keep-alive comments, which decode to nothing, keep a slow upstream from timing out", async () => {
    const encoder = new TextEncoder();
    const deliveries = [": keep-alive\n\n", ": keep-alive\n\n", ": keep-alive\n\n", "data: late\n\n"];
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(25);
        if (next < deliveries.length) controller.enqueue(encoder.encode(deliveries[next++]!));
        else controller.close();
      },
    });
    const parts = readSseBody<StreamPart>(body, { transform: (event, output) => output.enqueue(text(event.data)) }, new AbortController().signal, UNBOUNDED);
    const supervised = superviseUpstream(parts, 60);
    const seen: StreamPart[] = [];
    for (let batch = await supervised.read(); batch !== null; batch = await supervised.read()) seen.push(...batch);
    expect(seen).toEqual([text("late")]);
  });
});
