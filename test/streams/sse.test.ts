import { describe, expect, test } from "bun:test";
import { formatSseEvent, readSseBody, sseParserStep, type SseEvent } from "../../src/streams/sse.ts";
import type { StreamStep } from "../../src/streams/stream-step.ts";
import { UpstreamError } from "../../src/upstreams/upstream-error.ts";
import { seededRandom } from "../helpers/common.ts";

/** No bound on an event's size: these tests are about parsing, not about the limit. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** Feeds text chunks through the parser step (as a TransformStream) and collects the events. */
async function parse(chunks: readonly string[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  let i = 0;
  const source = new ReadableStream<string>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else controller.close();
    },
  });
  await source.pipeThrough(new TransformStream(sseParserStep(UNBOUNDED))).pipeTo(
    new WritableStream({
      write(event) {
        events.push(event);
      },
    }),
  );
  return events;
}

/** Feeds byte chunks through readSseBody (events passed on as they are) and collects the events. */
async function parseBytes(chunks: readonly Uint8Array[]): Promise<SseEvent[]> {
  return (await readBatches(chunks)).flat();
}

/** The batches readSseBody makes of byte chunks: one per chunk that completed an event. */
async function readBatches(chunks: readonly Uint8Array[]): Promise<SseEvent[][]> {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else controller.close();
    },
  });
  const source = readSseBody<SseEvent>(body, { transform: (event, output) => output.enqueue(event) }, new AbortController().signal, UNBOUNDED);
  const batches: SseEvent[][] = [];
  for (let batch = await source.read(); batch !== null; batch = await source.read()) batches.push(batch);
  return batches;
}

/** Only event name and data, for comparisons that do not care about ids. */
const simple = (events: SseEvent[]) => events.map((e) => ({ event: e.event, data: e.data }));

/** Splits text into chunks of random sizes in [1, max]. */
function randomChunks(text: string, max: number, random: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const size = 1 + Math.floor(random() * max);
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

const TWO_EVENTS = [
  { event: "message", data: "first" },
  { event: "message", data: "second" },
];

describe("line ends", () => {
  test("LF", async () => {
    expect(simple(await parse(["data: first\n\ndata: second\n\n"]))).toEqual(TWO_EVENTS);
  });

  test("CR", async () => {
    expect(simple(await parse(["data: first\r\rdata: second\r\r"]))).toEqual(TWO_EVENTS);
  });

  test("CRLF", async () => {
    expect(simple(await parse(["data: first\r\n\r\ndata: second\r\n\r\n"]))).toEqual(TWO_EVENTS);
  });

  test("mixed LF, CR and CRLF in one stream", async () => {
    const events = await parse(["data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"]);
    expect(simple(events)).toEqual([
      { event: "message", data: "a\nb\nc" },
      { event: "message", data: "d" },
    ]);
  });

  test("CR then LF is one line end, but LF then CR is two", async () => {
    // "\n\r" ends the data line and then a blank line: two events, not one.
    expect(simple(await parse(["data: first\n\rdata: second\n\r"]))).toEqual(TWO_EVENTS);
  });
});

describe("CRLF split across chunks", () => {
  test("\\r at the end of one chunk and \\n at the start of the next is one line end", async () => {
    // Were the lone \n read as a blank line, "a" and "b" would be two events.
    const events = await parse(["data: a\r", "\ndata: b\r", "\n\r", "\n"]);
    expect(simple(events)).toEqual([{ event: "message", data: "a\nb" }]);
  });

  test("the split CRLF of a blank line yields no extra event", async () => {
    const events = await parse(["data: first\r\n\r", "\ndata: second\r\n\r", "\n"]);
    expect(simple(events)).toEqual(TWO_EVENTS);
  });

  test("an empty chunk between \\r and \\n does not turn the \\n into a blank line", async () => {
    const events = await parse(["data: a\r", "", "\ndata: b\r\n\r\n"]);
    expect(simple(events)).toEqual([{ event: "message", data: "a\nb" }]);
  });

  test("a CRLF split across byte chunks of a body", async () => {
    const enc = new TextEncoder();
    const events = await parseBytes([enc.encode("data: a\r"), enc.encode("\ndata: b\r"), enc.encode("\n\r"), enc.encode("\n")]);
    expect(simple(events)).toEqual([{ event: "message", data: "a\nb" }]);
  });

  test("an empty byte chunk between \\r and \\n of a body", async () => {
    const enc = new TextEncoder();
    const events = await parseBytes([enc.encode("data: a\r"), new Uint8Array(0), enc.encode("\ndata: b\r\n\r\n")]);
    expect(simple(events)).toEqual([{ event: "message", data: "a\nb" }]);
  });
});

describe("fields", () => {
  test("comments are ignored", async () => {
    const events = await parse([": keep-alive\n\n:\ndata: x\n: in the middle\ndata: y\n\n: OPENROUTER PROCESSING\n\n"]);
    expect(simple(events)).toEqual([{ event: "message", data: "x\ny" }]);
  });

  test("multi-line data is joined with \\n", async () => {
    const events = await parse(["data: line one\ndata: line two\ndata: line three\n\n"]);
    expect(events.map((e) => e.data)).toEqual(["line one\nline two\nline three"]);
  });

  test("one leading space after the colon is dropped, others kept; no space is fine", async () => {
    const events = await parse(["data:nospace\n\ndata:  two\n\ndata:\n\ndata\n\n"]);
    expect(events.map((e) => e.data)).toEqual(["nospace", " two", "", ""]);
  });

  test("event names apply to one event; id is remembered", async () => {
    const events = await parse(["event: ping\nid: 7\ndata: a\n\ndata: b\n\n"]);
    expect(events).toEqual([
      { event: "ping", data: "a", id: "7" },
      { event: "message", data: "b", id: "7" },
    ]);
  });

  test("a block without data lines dispatches nothing", async () => {
    const events = await parse(["event: nothing\n\nid: 3\n\nretry: 100\n\nunknown: field\n\ndata: only\n\n"]);
    expect(simple(events)).toEqual([{ event: "message", data: "only" }]);
  });

  test("a data value may contain colons", async () => {
    const events = await parse(['data: {"a":"b:c"}\n\n']);
    expect(events[0]!.data).toBe('{"a":"b:c"}');
  });

  test("formatSseEvent output parses back to the same event", async () => {
    const text = formatSseEvent("one\ntwo") + formatSseEvent('{"x":1}', "custom");
    expect(simple(await parse([text]))).toEqual([
      { event: "message", data: "one\ntwo" },
      { event: "custom", data: '{"x":1}' },
    ]);
  });
});

describe("end of stream", () => {
  test("a final event without a trailing blank line is delivered", async () => {
    expect(simple(await parse(["data: first\n\ndata: second"]))).toEqual(TWO_EVENTS);
  });

  test("a final event ending in one line end is delivered", async () => {
    expect(simple(await parse(["data: first\n\ndata: second\n"]))).toEqual(TWO_EVENTS);
    expect(simple(await parse(["data: first\r\n\r\ndata: second\r"]))).toEqual(TWO_EVENTS);
  });

  test("an empty stream has no events", async () => {
    expect(await parse([])).toEqual([]);
    expect(await parse(["", "\n\n", ": c\n"])).toEqual([]);
  });
});

describe("events split anywhere", () => {
  const SAMPLE =
    ": comment\r\n" +
    "event: start\r\ndata: {\"id\":1}\r\n\r\n" +
    "data: multi\rdata: line\r\r" +
    "id: 42\ndata: one\ndata: two\n\n" +
    "data: tail without blank line";

  test("splitting at every offset gives the same events as one chunk", async () => {
    const whole = await parse([SAMPLE]);
    expect(whole).toHaveLength(4);
    for (let i = 0; i <= SAMPLE.length; i++) {
      const split = await parse([SAMPLE.slice(0, i), SAMPLE.slice(i)]);
      if (JSON.stringify(split) !== JSON.stringify(whole)) {
        expect({ offset: i, events: split }).toEqual({ offset: i, events: whole });
      }
    }
  });

  test("splitting at every pair of offsets gives the same events", async () => {
    // j > i: the middle chunk is never empty (empty chunks have a test of their own above).
    const whole = await parse([SAMPLE]);
    const failures: number[][] = [];
    for (let i = 0; i <= SAMPLE.length; i++) {
      for (let j = i + 1; j <= SAMPLE.length; j++) {
        const split = await parse([SAMPLE.slice(0, i), SAMPLE.slice(i, j), SAMPLE.slice(j)]);
        if (JSON.stringify(split) !== JSON.stringify(whole)) failures.push([i, j]);
      }
    }
    expect(failures).toEqual([]);
  });

  test("one character per chunk gives the same events", async () => {
    expect(await parse([...SAMPLE])).toEqual(await parse([SAMPLE]));
  });
});

describe("UTF-8 through parseSseStream", () => {
  const TEXT = "héllo 世界 🎉";
  const BYTES = new TextEncoder().encode(`data: ${TEXT}\n\ndata: ${TEXT}\r\n\r\n`);

  test("multi-byte characters split at every byte offset decode intact", async () => {
    for (let i = 0; i <= BYTES.length; i++) {
      const events = await parseBytes([BYTES.slice(0, i), BYTES.slice(i)]);
      expect(events.map((e) => e.data)).toEqual([TEXT, TEXT]);
    }
  });

  test("one byte per chunk decodes intact", async () => {
    const chunks = [...BYTES].map((b) => new Uint8Array([b]));
    const events = await parseBytes(chunks);
    expect(events.map((e) => e.data)).toEqual([TEXT, TEXT]);
  });

  test("a 4-byte emoji split 1+3, 2+2 and 3+1 decodes intact", async () => {
    const bytes = new TextEncoder().encode("data: 🎉\n\n");
    const at = bytes.indexOf(0xf0);
    for (const cut of [1, 2, 3]) {
      const events = await parseBytes([bytes.slice(0, at + cut), bytes.slice(at + cut)]);
      expect(events.map((e) => e.data)).toEqual(["🎉"]);
    }
  });
});

describe("large streams", () => {
  test("200k events in random 1..64-character chunks all arrive, in order", async () => {
    const count = 200_000;
    const parts: string[] = [];
    for (let i = 0; i < count; i++) parts.push(`data: ${i}\n\n`);
    const text = parts.join("");
    const events = await parse(randomChunks(text, 64, seededRandom(1)));
    expect(events.length).toBe(count);
    expect(events[0]!.data).toBe("0");
    expect(events[123_456]!.data).toBe("123456");
    expect(events.at(-1)!.data).toBe(String(count - 1));
  }, 20_000);

  test("20k events fed one character per chunk all arrive", async () => {
    const count = 20_000;
    const text = Array.from({ length: count }, (_, i) => `data: e${i}\r\n\r\n`).join("");
    const events = await parse([...text]);
    expect(events.length).toBe(count);
    expect(events.at(-1)!.data).toBe(`e${count - 1}`);
  }, 20_000);

  test("one 2 MB line fed in 8-character chunks arrives whole (no quadratic re-joining)", async () => {
    const payload = "x".repeat(2 * 1024 * 1024);
    const text = `data: ${payload}\n\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 8) chunks.push(text.slice(i, i + 8));
    const events = await parse(chunks);
    expect(events.length).toBe(1);
    expect(events[0]!.data.length).toBe(payload.length);
  }, 20_000);

  test("200k events as random-size byte chunks through readSseBody", async () => {
    const count = 200_000;
    const bytes = new TextEncoder().encode(Array.from({ length: count }, (_, i) => `data: é${i}\n\n`).join(""));
    const random = seededRandom(7);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; ) {
      const size = 1 + Math.floor(random() * 200);
      chunks.push(bytes.subarray(i, i + size));
      i += size;
    }
    const events = await parseBytes(chunks);
    expect(events.length).toBe(count);
    expect(events[99_999]!.data).toBe("é99999");
  }, 20_000);
});

describe("readSseBody delivers what each body chunk completed as one batch", () => {
  const enc = new TextEncoder();

  test("a chunk with two events is one batch of two; one that completes nothing is an empty batch", async () => {
    const batches = await readBatches([enc.encode("data: a\n\ndata: b\n\n"), enc.encode("data: c"), enc.encode("\n\n"), enc.encode(": keep-alive\n\n")]);
    expect(batches.map((batch) => batch.map((event) => event.data))).toEqual([["a", "b"], [], ["c"], []]);
  });

  test("an event left open when the body ends comes as a last batch", async () => {
    const batches = await readBatches([enc.encode("data: a\n\n"), enc.encode("data: tail")]);
    expect(batches.map((batch) => batch.map((event) => event.data))).toEqual([["a"], [], ["tail"]]);
  });

  /** A body that delivers one event and half of another, then fails its next read with `error`. */
  function breakingBody(error: unknown): ReadableStream<Uint8Array> {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(error);
        sent = true;
        controller.enqueue(enc.encode("data: a\n\ndata: half-"));
      },
    });
  }

  // The decoder stands in for a chat decoder: at the end it says whether the stream was whole.
  const flushing: StreamStep<SseEvent, string> = { transform: (event, output) => output.enqueue(event.data), flush: (output) => output.enqueue("flushed") };

  test("a connection the upstream breaks ends the body like a close, and the decoder's flush has the last word", async () => {
    const source = readSseBody<string>(breakingBody(new TypeError("connection reset")), flushing, new AbortController().signal, UNBOUNDED);
    expect(await source.read()).toEqual(["a"]);
    // As at a clean close: the event left open comes out, then the decoder's flush.
    expect(await source.read()).toEqual(["half-", "flushed"]);
    expect(await source.read()).toBeNull();
  });

  test("a read that failed because the gateway aborted it (client gone, deadline) rejects, without a flush", async () => {
    const abort = new AbortController();
    const reason = new DOMException("the request's deadline passed", "TimeoutError");
    const source = readSseBody<string>(breakingBody(reason), flushing, abort.signal, UNBOUNDED);
    expect(await source.read()).toEqual(["a"]);
    abort.abort(reason);
    await expect(source.read()).rejects.toBe(reason);
  });
});

describe("what the parser holds is bounded by maxEventLength", () => {
  const LIMIT = 100;
  const tooLarge = "the upstream sent an event larger than GATEWAY_MAX_UPSTREAM_BODY_BYTES (100 bytes)";

  /** Runs `chunks` through a parser bounded at LIMIT: the events it gave, and what it threw (null if nothing). */
  function feed(chunks: readonly string[]): { events: SseEvent[]; thrown: unknown } {
    const step = sseParserStep(LIMIT);
    const events: SseEvent[] = [];
    const output = { enqueue: (event: SseEvent) => void events.push(event) };
    try {
      for (const chunk of chunks) step.transform(chunk, output);
      step.flush?.(output);
      return { events, thrown: null };
    } catch (error) {
      return { events, thrown: error };
    }
  }

  const expectTooLarge = (thrown: unknown) => {
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ failure: "protocol", message: tooLarge });
  };

  test("a line that never ends is given up once its pieces pass the limit", () => {
    const { events, thrown } = feed(["data: a\n\n", "data: ", ...Array.from({ length: 20 }, () => "x".repeat(10))]);
    expect(simple(events)).toEqual([{ event: "message", data: "a" }]);
    expectTooLarge(thrown);
  });

  test("so is one unfinished line that came in a single chunk", () => {
    expectTooLarge(feed(["data: " + "x".repeat(LIMIT)]).thrown);
  });

  test("a comment line counts too while it is unfinished", () => {
    expectTooLarge(feed([": " + "x".repeat(60), "x".repeat(60)]).thrown);
  });

  test("an event of many data lines is given up once they pass the limit, even though each line is short", () => {
    const { events, thrown } = feed(Array.from({ length: 20 }, () => `data: ${"x".repeat(10)}\n`));
    expect(events).toEqual([]);
    expectTooLarge(thrown);
  });

  test("the unfinished line and the event's data lines count together", () => {
    expectTooLarge(feed([`data: ${"x".repeat(60)}\n`, `data: ${"y".repeat(40)}`]).thrown);
  });

  test("an event whose line, field name included, is exactly the limit passes whole, however it was split", () => {
    const data = "z".repeat(LIMIT - "data:".length);
    const { events, thrown } = feed(["data:", data.slice(0, 30), data.slice(30, 90), data.slice(90), "\n\n"]);
    expect(thrown).toBeNull();
    expect(simple(events)).toEqual([{ event: "message", data }]);
  });

  test("the count starts again with each event: many events together far past the limit all pass", () => {
    const chunk = `data: ${"x".repeat(30)}\ndata: ${"y".repeat(30)}\n\n`;
    const { events, thrown } = feed(Array.from({ length: 50 }, () => chunk));
    expect(thrown).toBeNull();
    expect(events).toHaveLength(50);
    expect(events[49]!.data).toBe(`${"x".repeat(30)}\n${"y".repeat(30)}`);
  });

  test("through readSseBody the read rejects with that error", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: " + "x".repeat(LIMIT)));
      },
    });
    const source = readSseBody<SseEvent>(body, { transform: (event, output) => output.enqueue(event) }, new AbortController().signal, LIMIT);
    await expect(source.read()).rejects.toMatchObject({ failure: "protocol", message: tooLarge });
  });
});
