import { describe, expect, test } from "bun:test";
import { batchesOf, type BatchSource } from "../../src/streams/batch-source.ts";
import { KEEP_ALIVE_COMMENT, renderBatches } from "../../src/streams/render-batches.ts";
import { tapBatches, type StreamEnd } from "../../src/streams/tap-stream.ts";
import type { StreamStep } from "../../src/streams/stream-step.ts";

/** Renders each item as its text, and "end" at the end. */
const plainRender: StreamStep<string, string> = {
  transform: (item, output) => output.enqueue(item),
  flush: (output) => output.enqueue("end"),
};

const decoder = new TextDecoder();

/** Every write of a body, as text. */
async function writesOf(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const writes: string[] = [];
  for await (const chunk of body) writes.push(decoder.decode(chunk));
  return writes;
}

describe("renderBatches with tapBatches: one write per batch, the end after the tap's onEnd", () => {
  test("each batch is one write; the flush comes after onEnd resolved", async () => {
    const log: string[] = [];
    const tapped = tapBatches(batchesOf([["a", "b"], ["c"]]), {
      onItem: (item) => void log.push(`item ${item}`),
      onEnd: async (end) => {
        await Bun.sleep(10);
        log.push(`end ${end}`);
      },
    });
    const writes = await writesOf(renderBatches(tapped, plainRender));
    expect(writes).toEqual(["ab", "c", "end"]);
    expect(log).toEqual(["item a", "item b", "item c", "end complete"]);
  });

  test("a batch the renderer holds back entirely sends nothing, and the next batch is read in the same pull", async () => {
    const holding: StreamStep<string, string> = { transform: (item, output) => (item === "held" ? undefined : output.enqueue(item)) };
    expect(await writesOf(renderBatches(batchesOf([["held"], ["x"]]), holding))).toEqual(["x"]);
  });

  test("a client that cancels during a read in flight ends the tap once, as cancelled, and cancels the upstream", async () => {
    const ends: StreamEnd[] = [];
    let upstreamCancelled = false;
    let release: (batch: string[] | null) => void = () => {};
    const upstream: BatchSource<string> = {
      read: () => new Promise((resolve) => (release = resolve)),
      async cancel() {
        upstreamCancelled = true;
        release(null);
      },
    };
    const body = renderBatches(tapBatches(upstream, { onEnd: async (end) => void ends.push(end) }), plainRender);
    const reader = body.getReader();
    const pending = reader.read();
    await Bun.sleep(5);
    await reader.cancel("client gone");
    await pending.catch(() => {});
    expect(upstreamCancelled).toBe(true);
    expect(ends).toEqual(["cancelled"]);
  });

  test("a renderer that throws fails the body and still ends the tap and cancels the upstream", async () => {
    const ends: StreamEnd[] = [];
    let upstreamCancelled = false;
    const source = batchesOf([["boom"], ["never"]]);
    const upstream: BatchSource<string> = {
      read: () => source.read(),
      async cancel() {
        upstreamCancelled = true;
      },
    };
    const throwing: StreamStep<string, string> = {
      transform() {
        throw new Error("render bug");
      },
    };
    const body = renderBatches(tapBatches(upstream, { onEnd: async (end) => void ends.push(end) }), throwing);
    await expect(writesOf(body)).rejects.toThrow("render bug");
    expect(upstreamCancelled).toBe(true);
    expect(ends).toEqual(["cancelled"]);
  });
});

describe("renderBatches with settled: the end waits for what rendering began", () => {
  test("the flush's writes reach the client only once settled's promise resolved, asked after the flush", async () => {
    const log: string[] = [];
    let settle = () => {};
    const render: StreamStep<string, string> = { transform: (item, output) => output.enqueue(item), flush: (output) => (log.push("flush"), output.enqueue("end")) };
    const settled = () => {
      log.push("asked");
      return new Promise<void>((resolve) => (settle = resolve));
    };
    const reader = renderBatches(batchesOf([["a"]]), render, undefined, settled).getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("a");
    let written = false;
    const last = reader.read().then((read) => ((written = true), read));
    // Turns enough for the flush and the write, were the write not held.
    await Bun.sleep(5);
    expect(log).toEqual(["flush", "asked"]);
    expect(written).toBe(false);
    settle();
    expect(decoder.decode((await last).value)).toBe("end");
    expect((await reader.read()).done).toBe(true);
  });

  test("nothing to wait for (undefined) ends the body as before", async () => {
    expect(await writesOf(renderBatches(batchesOf([["x"]]), plainRender, undefined, () => undefined))).toEqual(["x", "end"]);
  });
});

describe("renderBatches with a keep-alive: a comment when a delivery renders to nothing and the caller has waited", () => {
  /** A source whose batches each arrive at a given clock time. */
  function timedBatches(clock: { t: number }, timed: [number, string[]][]): BatchSource<string> {
    let next = 0;
    return {
      read: async () => {
        if (next >= timed.length) return null;
        const [at, batch] = timed[next++]!;
        clock.t = at;
        return batch;
      },
      cancel: async () => {},
    };
  }

  test("not before firstAfterMs, then at most once per everyMs, and never in place of content", async () => {
    const clock = { t: 0 };
    const source = timedBatches(clock, [
      [500, []], // too early for the first comment
      [1_000, []], // comment: the caller has had nothing for 1 s
      [1_500, []], // too soon after the comment
      [2_000, ["text"]],
      [11_000, []], // 9 s after the last write
      [12_000, []], // comment: 10 s after the last write
    ]);
    const writes = await writesOf(renderBatches(source, plainRender, { firstAfterMs: 1_000, everyMs: 10_000, now: () => clock.t }));
    expect(writes).toEqual([KEEP_ALIVE_COMMENT, "text", KEEP_ALIVE_COMMENT, "end"]);
  });

  test("without a keep-alive, deliveries that render to nothing write nothing", async () => {
    expect(await writesOf(renderBatches(batchesOf([[], [], ["x"]]), plainRender))).toEqual(["x", "end"]);
  });
});
