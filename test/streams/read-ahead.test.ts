import { afterAll, describe, expect, test } from "bun:test";
import { readAhead, type BodyReader } from "../../src/streams/read-ahead.ts";

/**
 * readAhead against a real loopback server that sends a body and then resets the connection,
 * read the way the gateway reads an upstream while its caller is slow: not at once.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Answers with "hello ", 20 ms later "world", and 10 ms later drops the connection. Read as
 * late through Bun's own reader, got at once, the caller gets "hello " and the error: "world"
 * came while no read was pending, and the reset discarded it.
 */
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch() {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode("hello "));
        await Bun.sleep(20);
        controller.enqueue(encoder.encode("world"));
        await Bun.sleep(10);
        controller.error();
      },
    });
    return new Response(body);
  },
});
afterAll(() => server.stop(true));

/** Everything `reader` gives until its end or failure, and how it ended. */
async function readAll(reader: BodyReader): Promise<{ text: string; failed: boolean }> {
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, failed: false };
      text += decoder.decode(value);
    }
  } catch {
    return { text, failed: true };
  }
}

describe("readAhead", () => {
  test("bytes that came while no read was pending survive the reset that follows", async () => {
    const response = await fetch(`http://127.0.0.1:${server.port}/`);
    const reader = readAhead(response.body!, 1024);
    await Bun.sleep(100);
    expect(await readAll(reader)).toEqual({ text: "hello world", failed: true });
  });

  test("reads no further ahead than the limit, and reads on as the caller takes", async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulls++;
          controller.enqueue(new Uint8Array(1024));
          if (pulls === 20) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const reader = readAhead(body, 4 * 1024);
    await Bun.sleep(20);
    expect(pulls).toBe(4);
    await reader.read();
    await Bun.sleep(20);
    expect(pulls).toBe(5);
    let bytes = 1024;
    for (let result = await reader.read(); !result.done; result = await reader.read()) bytes += result.value.byteLength;
    expect(bytes).toBe(20 * 1024);
    expect(pulls).toBe(20);
  });

  test("past the end, reads answer done again", async () => {
    const reader = readAhead(new Response("x").body!, 1024);
    expect(decoder.decode((await reader.read()).value)).toBe("x");
    expect((await reader.read()).done).toBe(true);
    expect((await reader.read()).done).toBe(true);
  });

  test("cancel stops the body", async () => {
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new Uint8Array(8)),
      cancel: (reason) => {
        cancelled = reason;
      },
    });
    const reader = readAhead(body, 64);
    await reader.read();
    await reader.cancel("caller left");
    expect(cancelled).toBe("caller left");
  });
});
