import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { receiveMultipartUpload, type UploadLimits } from "../../src/uploads/receive-upload.ts";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";
import { chunked, platformForm, readAll, sha256, trickyBytes, utf8 } from "../multipart/_support.ts";

let dir = "";
/** Temp files in this test's own folder, so leftovers are visible. */
const inDir = () => createTempUpload(dir);
let limits: UploadLimits;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "receive-upload-test-"));
  limits = { maxFileBytes: 100_000, maxFieldBytes: 1000, maxParts: 10 };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A form the platform serialised, with `files` as [field, bytes] pairs. */
async function form(fields: [string, string][], files: [string, Uint8Array<ArrayBuffer>][]) {
  const data = new FormData();
  for (const [name, value] of fields) data.append(name, value);
  for (const [name, bytes] of files) data.append(name, new File([bytes], "talk.wav", { type: "audio/wav" }));
  return platformForm(data);
}

/** receiveMultipartUpload's rejection, which must be a GatewayError with `status`, leaving `dir` empty. */
async function refused(status: number, body: ReadableStream<Uint8Array> | null, contentType: string) {
  const error = await receiveMultipartUpload(body, contentType, inDir, limits).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).status).toBe(status as GatewayError["status"]);
  expect(await readdir(dir)).toEqual([]);
  return error as GatewayError;
}

describe("receiveMultipartUpload", () => {
  test("spools the file to disk and returns the fields", async () => {
    const audio = trickyBytes(99_999, ["----WebKitFormBoundary"]);
    const fields: [string, string][] = [
      ["model", "whisper-1"],
      ["timestamp_granularities[]", "word"],
      ["timestamp_granularities[]", "segment"],
      ["__proto__", "just a field"],
    ];
    const { bytes, contentType } = await form(fields, [["file", audio]]);
    const received = await receiveMultipartUpload(chunked(bytes, 1000), contentType, inDir, limits);
    expect(received.entries).toEqual(fields);
    expect(received.fields).toEqual({ model: "whisper-1", "timestamp_granularities[]": "segment", ["__proto__"]: "just a field" });
    expect(Object.getPrototypeOf(received.fields)).toBe(Object.prototype);
    const file = received.file!;
    expect(file.filename).toBe("talk.wav");
    expect(file.contentType).toBe("audio/wav");
    expect(file.size).toBe(audio.length);
    expect(await readdir(dir)).toHaveLength(1);
    expect(await sha256(await readAll(file.open()))).toBe(await sha256(audio));
    expect(await file.read(10, 5)).toEqual(audio.subarray(10, 15));
    await file.remove();
    expect(await readdir(dir)).toEqual([]);
  });

  test("a form without a file gives file: null", async () => {
    const { bytes, contentType } = await form([["model", "m"]], []);
    const received = await receiveMultipartUpload(chunked(bytes, 64), contentType, inDir, limits);
    expect(received).toEqual({ fields: { model: "m" }, entries: [["model", "m"]], file: null });
  });

  test("a file exactly at the cap is accepted", async () => {
    const { bytes, contentType } = await form([], [["file", new Uint8Array(100_000)]]);
    const received = await receiveMultipartUpload(chunked(bytes, 4096), contentType, inDir, limits);
    expect(received.file!.size).toBe(100_000);
    await received.file!.remove();
  });

  test("one byte over the cap is a 413 and the partial file is gone", async () => {
    const { bytes, contentType } = await form([], [["file", new Uint8Array(100_001)]]);
    const error = await refused(413, chunked(bytes, 4096), contentType);
    expect(error.message).toContain("100000 bytes");
  });

  test("a second file, or a file under another name, is a 400 and nothing is left behind", async () => {
    const two = await form([], [["file", new Uint8Array(50)], ["file", new Uint8Array(50)]]);
    expect((await refused(400, chunked(two.bytes, 7), two.contentType)).message).toContain("one file");
    const other = await form([], [["audio", new Uint8Array(50)]]);
    expect((await refused(400, chunked(other.bytes, 7), other.contentType)).message).toContain('"audio"');
  });

  test("errors after the file was written still remove it", async () => {
    const tooManyParts = await form(
      Array.from({ length: 10 }, (_, i): [string, string] => [`f${i}`, "x"]),
      [["file", new Uint8Array(10)]],
    );
    await refused(413, chunked(tooManyParts.bytes, 100), tooManyParts.contentType);
    const bigFieldAfterFile =
      `--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n0123456789\r\n` +
      `--B\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${"p".repeat(1001)}\r\n--B--\r\n`;
    await refused(413, chunked(utf8(bigFieldAfterFile), 100), "multipart/form-data; boundary=B");
  });

  test("a body missing its closing boundary is a 400 and the file is removed", async () => {
    const { bytes, contentType } = await form([], [["file", new Uint8Array(5000)]]);
    await refused(400, chunked(bytes.subarray(0, bytes.length - 10), 512), contentType);
  });

  // Told by the body's read failing (Deno's BadResource, a socket error), not by the request's
  // abort signal: Deno aborts that only after the handler has answered.
  test("a client that hangs up mid-upload is a 499, and the file is removed", async () => {
    const { bytes, contentType } = await form([], [["file", new Uint8Array(50_000)]]);
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset > bytes.length / 2) return controller.error(new Error("BadResource: Cannot read request body as underlying resource unavailable"));
        controller.enqueue(bytes.slice(offset, offset + 4096));
        offset += 4096;
      },
    });
    await refused(499, body, contentType);
  });

  test("no body, or a Content-Type without a boundary, is a 400", async () => {
    await refused(400, null, "multipart/form-data; boundary=x");
    const { bytes } = await form([], [["file", new Uint8Array(10)]]);
    await refused(400, chunked(bytes, 64), "multipart/form-data");
    await refused(400, chunked(utf8("garbage"), 64), "multipart/form-data; boundary=x");
  });
});
