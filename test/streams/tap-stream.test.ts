import { describe, expect, test } from "bun:test";
import { tapStream, type StreamEnd } from "../../src/streams/tap-stream.ts";

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
