import { describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { parseMultipartStream, type MultipartLimits } from "../../src/multipart/parse-multipart.ts";
import { chunked, LOOSE_LIMITS, MiB, parseToMemory, utf8 } from "./_support.ts";

const BOUNDARY = "xYz-123";
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;
const filePart = (bytes: number) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\n${"a".repeat(bytes)}\r\n`;
const fieldPart = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const CLOSE = `--${BOUNDARY}--\r\n`;

/** The GatewayError a parse rejects with (fails the test if it resolves or throws something else). */
async function failure(body: string | ReadableStream<Uint8Array>, type = TYPE, limits: MultipartLimits = LOOSE_LIMITS) {
  const stream = typeof body === "string" ? chunked(utf8(body), 5) : body;
  const error = await parseToMemory(stream, type, limits).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** A file part that never ends: header, then `a` bytes for ever, counting what was pulled and whether it was cancelled. */
function endlessUpload() {
  const probe = { pulled: 0, cancelled: false };
  const head = utf8(filePart(0).slice(0, -2));
  const filler = new Uint8Array(16 * 1024).fill(97);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = probe.pulled === 0 ? head : filler.slice();
        probe.pulled += chunk.length;
        controller.enqueue(chunk);
      },
      cancel() {
        probe.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, probe };
}

describe("parseMultipartStream refuses bad Content-Types with 400", () => {
  for (const type of [
    "multipart/form-data",
    "multipart/form-data; boundary=",
    'multipart/form-data; boundary=""',
    `multipart/form-data; boundary=${"b".repeat(71)}`,
    "multipart/form-data; boundary=ends-in-space ",
    "multipart/form-data; boundary=bad\u00e9char",
    `multipart/mixed; boundary=${BOUNDARY}`,
    `application/json; boundary=${BOUNDARY}`,
    "",
  ]) {
    test(JSON.stringify(type), async () => {
      expect((await failure(filePart(3) + CLOSE, type)).status).toBe(400);
    });
  }
});

describe("parseMultipartStream refuses malformed bodies with 400", () => {
  const cases: [string, string][] = [
    ["an empty body", ""],
    ["garbage with no boundary", "this is not multipart at all\r\n".repeat(20)],
    ["a body cut off inside a file", filePart(100).slice(0, -20)],
    ["a body with no closing boundary", filePart(10) + fieldPart("model", "x")],
    ["a closing boundary missing its last dash", filePart(10) + `--${BOUNDARY}-`],
    ["a part with no Content-Disposition", `--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n${CLOSE}`],
    ["a part with no name", `--${BOUNDARY}\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n${CLOSE}`],
    ["a part that is not form-data", `--${BOUNDARY}\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n${CLOSE}`],
    ["text right after a boundary", `--${BOUNDARY}X\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n${CLOSE}`],
    ["a boundary line ending in a bare CR", `--${BOUNDARY}\rContent-Disposition: form-data; name="a"\r\n\r\nx\r\n${CLOSE}`],
    ["headers that never end", `--${BOUNDARY}\r\n` + "X-Filler: 0123456789\r\n".repeat(1000)],
    ["an endless preamble", "preamble\r\n".repeat(5000) + filePart(1) + CLOSE],
  ];
  for (const [label, body] of cases) {
    test(label, async () => {
      expect((await failure(body)).status).toBe(400);
    });
  }
});

describe("parseMultipartStream limits", () => {
  const limits: MultipartLimits = { maxFileBytes: 1000, maxFieldBytes: 50, maxParts: 3 };

  test("a file exactly at the cap is accepted; one byte over is a 413 that names the limit", async () => {
    const ok = await parseToMemory(chunked(utf8(filePart(1000) + CLOSE), 64), TYPE, limits);
    expect(ok.files[0]!.size).toBe(1000);
    const error = await failure(filePart(1001) + CLOSE, TYPE, limits);
    expect(error.status).toBe(413);
    expect(error.message).toContain("1000 bytes");
  });

  test("the 413 message gives the limit in MB; the sink never gets a byte past the cap and is aborted", async () => {
    const max = 25 * MiB;
    let written = 0;
    let ending = "";
    const body = chunked(utf8(filePart(max + 1) + CLOSE), 300_000);
    const outcome = parseMultipartStream(
      body,
      TYPE,
      {
        onField() {},
        onFile: () =>
          new WritableStream<Uint8Array>({
            write: (chunk) => void (written += chunk.length),
            close: () => void (ending = "closed"),
            abort: () => void (ending = "aborted"),
          }),
      },
      { ...LOOSE_LIMITS, maxFileBytes: max },
    );
    const error = (await outcome.catch((e: unknown) => e)) as GatewayError;
    expect(error.status).toBe(413);
    expect(error.message).toContain("25 MB");
    expect(written).toBeLessThanOrEqual(max);
    expect(ending).toBe("aborted");
  });

  test("a field over maxFieldBytes is a 413; at the limit it is fine", async () => {
    const ok = await parseToMemory(chunked(utf8(fieldPart("p", "x".repeat(50)) + CLOSE), 7), TYPE, limits);
    expect(ok.fields).toEqual([["p", "x".repeat(50)]]);
    const error = await failure(fieldPart("p", "x".repeat(51)) + CLOSE, TYPE, limits);
    expect(error.status).toBe(413);
    expect(error.message).toContain('"p"');
  });

  test("more parts than maxParts is a 413", async () => {
    const three = fieldPart("a", "1") + fieldPart("b", "2") + filePart(1);
    expect((await parseToMemory(chunked(utf8(three + CLOSE), 9), TYPE, limits)).fields).toHaveLength(2);
    const error = await failure(three + fieldPart("c", "3") + CLOSE, TYPE, limits);
    expect(error.status).toBe(413);
    expect(error.message).toContain("3 parts");
  });

  test("past the cap the body is cancelled and no more of it is read", async () => {
    const { stream, probe } = endlessUpload();
    expect((await failure(stream, TYPE, limits)).status).toBe(413);
    expect(probe.cancelled).toBe(true);
    expect(probe.pulled).toBeLessThan(1000 + 2 * 16 * 1024);
  });

  test("after the closing boundary the epilogue is not read", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => controller.enqueue(utf8(fieldPart("a", "1") + CLOSE)),
        pull: (controller) => controller.enqueue(utf8("an endless epilogue ")),
        cancel: () => void (cancelled = true),
      },
      { highWaterMark: 0 },
    );
    expect((await parseToMemory(body, TYPE)).fields).toEqual([["a", "1"]]);
    expect(cancelled).toBe(true);
  });
});

describe("parseMultipartStream when the body fails", () => {
  test("a stream that errors halfway (the client hung up) rejects with a 499 and aborts the open file sink with it", async () => {
    let sent = 0;
    const hangUp = new Error("client went away");
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 0) controller.enqueue(utf8(filePart(0).slice(0, -2)));
        else if (sent < 5) controller.enqueue(new Uint8Array(1000));
        else controller.error(hangUp);
      },
    });
    let aborted: unknown = null;
    const outcome = parseMultipartStream(
      body,
      TYPE,
      { onField() {}, onFile: () => new WritableStream({ abort: (reason) => void (aborted = reason) }) },
      LOOSE_LIMITS,
    );
    const error = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(499);
    expect(aborted).toBe(error);
  });

  test("an error thrown by a handler stops the parse and cancels the body", async () => {
    const { stream, probe } = endlessUpload();
    const refusal = new GatewayError(400, "no files here");
    const outcome = parseMultipartStream(
      stream,
      TYPE,
      {
        onField() {},
        onFile() {
          throw refusal;
        },
      },
      LOOSE_LIMITS,
    );
    expect(await outcome.catch((e: unknown) => e)).toBe(refusal);
    expect(probe.cancelled).toBe(true);
  });
});
