import { describe, expect, test } from "bun:test";
import { tapBatches, tapStream, type StreamEnd } from "../../src/streams/tap-stream.ts";
import { batchesOf } from "../../src/streams/batch-source.ts";

/** A reader that gives `chunks`, then fails with `failure`. */
function failingAfter(chunks: string[], failure: Error) {
  let next = 0;
  return {
    read: () => (next < chunks.length ? Promise.resolve({ done: false as const, value: chunks[next++]! }) : Promise.reject(failure)),
    cancel: () => Promise.resolve(),
  };
}

/** Reads `stream` to its end; what was read and what it failed with. */
async function drain(stream: ReadableStream<string>) {
  const reader = stream.getReader();
  const read: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { read, failure: null };
      read.push(value);
    }
  } catch (failure) {
    return { read, failure };
  }
}

describe("tapStream, when a read fails", () => {
  test("passes what came, errors the stream with the error, and tells onEnd once with it", async () => {
    const broken = new Error("upstream broke off");
    const ends: [StreamEnd, unknown][] = [];
    const stream = tapStream(failingAfter(["a", "b"], broken), { onEnd: async (end, error) => void ends.push([end, error]) });
    expect(await drain(stream)).toEqual({ read: ["a", "b"], failure: broken });
    expect(ends).toEqual([["failed", broken]]);
  });

  test("errors the stream with errorReason's value when one is given (the runtime's server shows it)", async () => {
    const broken = new Error("upstream broke off");
    const stream = tapStream(failingAfter(["a"], broken), { onEnd: async () => {}, errorReason: () => undefined });
    expect(await drain(stream)).toEqual({ read: ["a"], failure: undefined });
  });
});

describe("tapBatches with a deadline: a reader that stopped reading is still ended", () => {
  /** A tap of one batch whose onEnd records each call and settles after 10 ms. */
  function tapped(deadline: AbortController, client: AbortController) {
    const ends: StreamEnd[] = [];
    const settled: string[] = [];
    const source = tapBatches(batchesOf([["a"]]), {
      deadline: { signal: deadline.signal, client: client.signal },
      onEnd: async (end) => {
        ends.push(end);
        await Bun.sleep(10);
        settled.push(end);
      },
    });
    return { source, ends, settled };
  }

  test("a deadline that passes with no read in flight (the reader stopped) ends it at once, stalled; the end read later waits for that settlement", async () => {
    const deadline = new AbortController();
    const { source, ends, settled } = tapped(deadline, new AbortController());
    expect(await source.read()).toEqual(["a"]);
    deadline.abort(new DOMException("the request's deadline passed", "TimeoutError"));
    expect(ends).toEqual(["stalled"]);
    expect(await source.read()).toBeNull();
    expect(settled).toEqual(["stalled"]);
    expect(ends).toEqual(["stalled"]);
  });

  test("a deadline that passes while a read waits on the upstream ends it as failed, the upstream's doing", async () => {
    const deadline = new AbortController();
    const ends: StreamEnd[] = [];
    const never = { read: () => new Promise<string[] | null>(() => {}), cancel: async () => {} };
    const source = tapBatches(never, { deadline: { signal: deadline.signal, client: new AbortController().signal }, onEnd: async (end) => void ends.push(end) });
    void source.read();
    deadline.abort(new DOMException("the request's deadline passed", "TimeoutError"));
    expect(ends).toEqual(["failed"]);
  });

  test("a deadline aborted because the client left ends it as cancelled", () => {
    const deadline = new AbortController();
    const client = new AbortController();
    const { ends } = tapped(deadline, client);
    client.abort();
    deadline.abort(client.signal.reason);
    expect(ends).toEqual(["cancelled"]);
  });

  test("a deadline already passed when the tap begins ends it at once", () => {
    const deadline = new AbortController();
    deadline.abort();
    expect(tapped(deadline, new AbortController()).ends).toEqual(["stalled"]);
  });
});
