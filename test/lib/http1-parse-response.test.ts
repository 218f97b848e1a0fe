import { describe, expect, test } from "bun:test";
import { ResponseParser, type ResponseHead } from "../../src/lib/http1/parse-response.ts";
import { MalformedResponse } from "../../src/lib/http1/malformed-response.ts";

/** What a parser made of a response's bytes: every sink call, its state after them, or what it threw. */
interface Parsed {
  heads: ResponseHead[];
  body: string;
  ends: number;
  done: boolean;
  reusable: boolean;
  /** The MalformedResponse thrown, by message; anything else thrown is rethrown. */
  malformed: string | null;
}

interface Feed {
  headRequest?: boolean;
  /** Calls finish() after the last push, as a connection closed by the server does. */
  finish?: boolean;
}

/** Bytes of a response written as text, one byte per character (latin1). */
function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (character) => character.charCodeAt(0));
}

/** Runs a parser over `pushes`, one push() each. */
function parse(pushes: Uint8Array[], { headRequest = false, finish = false }: Feed): Parsed {
  const parsed: Parsed = { heads: [], body: "", ends: 0, done: false, reusable: false, malformed: null };
  const parser = new ResponseParser(
    {
      head: (head) => parsed.heads.push(head),
      body: (bytes) => (parsed.body += String.fromCharCode(...bytes)),
      end: () => (parsed.ends += 1),
    },
    headRequest,
  );
  try {
    for (const bytes of pushes) parser.push(bytes);
    if (finish) parser.finish();
  } catch (error) {
    if (!(error instanceof MalformedResponse)) throw error;
    parsed.malformed = error.message;
  }
  parsed.done = parser.done;
  parsed.reusable = parser.reusable;
  return parsed;
}

/** Parses `text` pushed whole and pushed one byte at a time, expects the same result from both, and returns it. */
function parseBothWays(text: string, feed: Feed = {}): Parsed {
  const bytes = bytesOf(text);
  const whole = parse([bytes], feed);
  const byteByByte = parse(Array.from(bytes, (_, at) => bytes.subarray(at, at + 1)), feed);
  expect(byteByByte).toEqual(whole);
  return whole;
}

const OK_HEAD = "HTTP/1.1 200 OK\r\n";

describe("ResponseParser: framing", () => {
  test("a Content-Length body: the head with its fields in order, names lowercased, then the body and the end", () => {
    const parsed = parseBothWays(`${OK_HEAD}Content-Type: text/plain\r\nX-Two: a\r\nx-two:  b \r\nContent-Length: 5\r\n\r\nhello`);
    expect(parsed.heads).toEqual([{ status: 200, statusText: "OK", headers: [["content-type", "text/plain"], ["x-two", "a"], ["x-two", "b"], ["content-length", "5"]] }]);
    expect(parsed).toMatchObject({ body: "hello", ends: 1, done: true, reusable: true, malformed: null });
  });

  test("a status line without a reason phrase has an empty statusText", () => {
    expect(parseBothWays("HTTP/1.1 404\r\ncontent-length: 0\r\n\r\n").heads[0]).toEqual({ status: 404, statusText: "", headers: [["content-length", "0"]] });
  });

  test("a chunked body with chunk extensions and trailer fields: the chunks' data only, and reusable", () => {
    const parsed = parseBothWays(`${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\nA ; x="y"\r\n, world!!!\r\n0\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n`);
    expect(parsed).toMatchObject({ body: "hello, world!!!", ends: 1, done: true, reusable: true, malformed: null });
  });

  test("100 Continue and 103 Early Hints are passed over: only the final head reaches the sink", () => {
    const parsed = parseBothWays(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n${OK_HEAD}Content-Length: 2\r\n\r\nok`);
    expect(parsed.heads.map((head) => head.status)).toEqual([200]);
    expect(parsed).toMatchObject({ body: "ok", done: true, reusable: true });
  });

  test("101 Switching Protocols, which no request asked for, is malformed", () => {
    expect(parseBothWays("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n").malformed).toContain("switched protocols");
  });

  test.each([204, 304])("%i has no body even with a Content-Length, and leaves the connection reusable", (status) => {
    const parsed = parseBothWays(`HTTP/1.1 ${status} X\r\nContent-Length: 5\r\n\r\n`);
    expect(parsed).toMatchObject({ body: "", ends: 1, done: true, reusable: true });
  });

  test("the answer to HEAD has no body even with a Content-Length", () => {
    const parsed = parseBothWays(`${OK_HEAD}Content-Length: 5\r\n\r\n`, { headRequest: true });
    expect(parsed).toMatchObject({ body: "", ends: 1, done: true, reusable: true });
  });

  test("an HTTP/1.0 answer ends in its framing but its connection is not reused", () => {
    const parsed = parseBothWays("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
    expect(parsed).toMatchObject({ body: "ok", done: true, reusable: false });
  });

  test("Connection: close (among other tokens, any case) leaves the connection not reusable", () => {
    const parsed = parseBothWays(`${OK_HEAD}Connection: Upgrade, CLOSE\r\nContent-Length: 2\r\n\r\nok`);
    expect(parsed).toMatchObject({ body: "ok", done: true, reusable: false });
  });

  test("Transfer-Encoding with Content-Length: the body is chunked, and the connection is not reused", () => {
    const parsed = parseBothWays(`${OK_HEAD}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
    expect(parsed).toMatchObject({ body: "hello", done: true, reusable: false, malformed: null });
  });

  test("a Content-Length repeated with equal values, in one field or two, is one length", () => {
    expect(parseBothWays(`${OK_HEAD}Content-Length: 5, 5\r\n\r\nhello`)).toMatchObject({ body: "hello", done: true, reusable: true });
    expect(parseBothWays(`${OK_HEAD}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello`)).toMatchObject({ body: "hello", done: true, reusable: true });
  });

  test("differing Content-Length values, in one field or two, are malformed", () => {
    expect(parseBothWays(`${OK_HEAD}Content-Length: 5, 6\r\n\r\nhello`).malformed).toContain("Content-Length");
    expect(parseBothWays(`${OK_HEAD}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`).malformed).toContain("Content-Length");
    expect(parseBothWays(`${OK_HEAD}Content-Length: -1\r\n\r\n`).malformed).toContain("Content-Length");
  });

  test("without framing the body runs until finish(), and the connection is not reused", () => {
    const text = `${OK_HEAD}Content-Type: text/plain\r\n\r\nall of it`;
    expect(parseBothWays(text)).toMatchObject({ body: "all of it", ends: 0, done: false });
    expect(parseBothWays(text, { finish: true })).toMatchObject({ body: "all of it", ends: 1, done: true, reusable: false, malformed: null });
  });

  test("bytes after the end of the response leave the connection not reusable", () => {
    const parsed = parseBothWays(`${OK_HEAD}Content-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n`);
    expect(parsed).toMatchObject({ body: "ok", ends: 1, done: true, reusable: false });
    expect(parseBothWays(`${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n\r\n`)).toMatchObject({ done: true, reusable: false });
  });

  test("LF-only line endings are accepted in the head and the chunked body", () => {
    const parsed = parseBothWays("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nX-A: b\n\n3\nabc\n0\nX-T: 1\n\n");
    expect(parsed.heads[0]!.headers).toEqual([["transfer-encoding", "chunked"], ["x-a", "b"]]);
    expect(parsed).toMatchObject({ body: "abc", done: true, reusable: true, malformed: null });
  });
});

describe("ResponseParser: a response cut short", () => {
  test("finish() before any byte throws that the upstream did not answer, and started is false until a byte comes", () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    expect(parser.started).toBe(false);
    expect(() => parser.finish()).toThrow("without answering");
    parser.push(bytesOf("H"));
    expect(parser.started).toBe(true);
  });

  test("after a whole interim head the response has started: finish() then says it was cut in the middle", () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    parser.push(bytesOf("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"));
    expect(parser.started).toBe(true);
    expect(() => parser.finish()).toThrow("in the middle");
  });

  test("finish() in the middle of the head or of a framed body throws MalformedResponse", () => {
    expect(parseBothWays("HTTP/1.1 200 OK\r\nContent-Le", { finish: true }).malformed).toContain("in the middle");
    expect(parseBothWays(`${OK_HEAD}Content-Length: 10\r\n\r\nhello`, { finish: true })).toMatchObject({ body: "hello", ends: 0, done: false, malformed: expect.stringContaining("in the middle") });
    expect(parseBothWays(`${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n5\r\nhel`, { finish: true }).malformed).toContain("in the middle");
  });
});

describe("ResponseParser: malformed answers", () => {
  test.each([
    ["a status line that is not HTTP/1.x", "HTTP/2 200 OK\r\n\r\n", "status line"],
    ["an obs-fold continuation line", `${OK_HEAD}X-Long: a\r\n  continued\r\nContent-Length: 0\r\n\r\n`, "not a header field"],
    ["a field line without a colon", `${OK_HEAD}no colon here\r\n\r\n`, "not a header field"],
    ["a field value with a NUL", `${OK_HEAD}X-Id: a\0b\r\nContent-Length: 0\r\n\r\n`, "NUL or a bare CR"],
    ["a field value with a bare CR", `${OK_HEAD}X-Id: a\rb\r\nContent-Length: 0\r\n\r\n`, "NUL or a bare CR"],
    ["a status over 599", "HTTP/1.1 600 Nope\r\nContent-Length: 0\r\n\r\n", "outside"],
    ["a chunk size that is not hexadecimal", `${OK_HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, "not hexadecimal"],
    ["chunk data running past its size", `${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n`, "runs past its size"],
    ["a chunk-size line over 8 KiB", `${OK_HEAD}Transfer-Encoding: chunked\r\n\r\n1;${"x".repeat(9000)}\r\na\r\n0\r\n\r\n`, "line too long"],
    ["a head over 64 KiB", `${OK_HEAD}${"X-Pad: ".concat("p".repeat(1000), "\r\n").repeat(70)}\r\n`, "over 65536 bytes"],
  ])("%s", (_, text, message) => {
    expect(parseBothWays(text).malformed).toContain(message);
  });

  test("a head over 64 KiB that never ends is refused once past the limit, not gathered on", () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    const line = bytesOf(`X-Pad: ${"p".repeat(1000)}\r\n`);
    parser.push(bytesOf(OK_HEAD));
    let pushed = 0;
    expect(() => {
      for (; pushed < 1000; pushed++) parser.push(line);
    }).toThrow(MalformedResponse);
    // The push that took the head past 64 KiB threw; none before it did.
    expect(OK_HEAD.length + pushed * line.length).toBeLessThanOrEqual(64 * 1024);
    expect(OK_HEAD.length + (pushed + 1) * line.length).toBeGreaterThan(64 * 1024);
  });
});

describe("ResponseParser: cost", () => {
  test("a 60 KiB head trickled one byte per push is read whole, its fields intact", () => {
    const fields = Array.from({ length: 600 }, (_, i) => `x-field-${i}: ${"v".repeat(80)}`);
    const parsed = parseBothWays(`${OK_HEAD}${fields.join("\r\n")}\r\nContent-Length: 2\r\n\r\nok`);
    expect(parsed.heads[0]!.headers).toHaveLength(601);
    expect(parsed.heads[0]!.headers[599]).toEqual(["x-field-599", "v".repeat(80)]);
    expect(parsed).toMatchObject({ body: "ok", done: true, reusable: true });
  });

  test("body bytes are views of the bytes pushed, not copies", () => {
    const head = `${OK_HEAD}Content-Length: 5\r\n\r\n`;
    const pushed = new TextEncoder().encode(`${head}hello`);
    const chunks: Uint8Array[] = [];
    new ResponseParser({ head() {}, body: (bytes) => chunks.push(bytes), end() {} }).push(pushed);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.buffer).toBe(pushed.buffer);
    expect(chunks[0]!.byteOffset).toBe(head.length);
    expect(new TextDecoder().decode(chunks[0])).toBe("hello");
  });
});
