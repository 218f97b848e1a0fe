import { describe, expect, test } from "bun:test";
import { encodeMultipart } from "../../src/multipart/encode-multipart.ts";
import {
  chunked,
  MiB,
  parseToMemory,
  platformForm,
  randomCuts,
  readAll,
  sha256,
  trickyBytes,
  utf8,
  type Parsed,
} from "./_support.ts";

const CUTS: readonly (number | number[])[] = [1, 2, 7, 64, 4096, randomCuts(1, 500, 300), randomCuts(2, 500, 9000)];
const FIELDS: [string, string][] = [
  ["model", "whisper-1"],
  ["prompt", "naïve café, 日本語, \"quoted\"\r\nsecond line\r\n--not a boundary"],
  ["empty", ""],
  ['we"ird\r\nname', "value"],
];

/** What a parse must yield for FIELDS plus one file. */
async function expected(file: Uint8Array<ArrayBuffer>, filename: string, contentType: string): Promise<Parsed> {
  return {
    fields: FIELDS,
    files: [{ name: "file", filename, contentType, size: file.length, sha256: await sha256(file) }],
  };
}

/** A body the runtime's own FormData serialiser produced. */
async function platformBody(file: Uint8Array<ArrayBuffer>, filename: string) {
  const form = new FormData();
  for (const [name, value] of FIELDS) form.append(name, value);
  form.append("file", new File([file], filename, { type: "audio/mpeg" }));
  return platformForm(form);
}

/** A body encodeMultipart produced. */
async function encodedBody(file: Uint8Array<ArrayBuffer>, filename: string) {
  const encoded = encodeMultipart(FIELDS, {
    field: "file",
    filename,
    contentType: "audio/mpeg",
    size: file.length,
    open: () => chunked(file, 65536),
  });
  return { bytes: await readAll(encoded.body), contentType: encoded.contentType };
}

describe("parseMultipartStream on real bodies, cut every way", () => {
  const small = trickyBytes(20_000, ["----WebKitFormBoundary", "gateway-", "--formdata-undici-0"]);

  for (const [label, build] of [
    ["platform FormData", platformBody],
    ["encodeMultipart", encodedBody],
  ] as const) {
    test(`${label}: chunks of 1, 2, 7, 64, 4096 and random sizes give the same fields and file`, async () => {
      const { bytes, contentType } = await build(small, 'clip "one".mp3');
      const want = await expected(small, 'clip "one".mp3', "audio/mpeg");
      for (const cut of CUTS) {
        expect(await parseToMemory(chunked(bytes, cut), contentType)).toEqual(want);
      }
    });

    test(`${label}: a 3 MB file of delimiter look-alikes survives`, async () => {
      const big = trickyBytes(3 * MiB, ["----WebKitFormBoundary", "gateway-", "--formdata-undici-0"], 99);
      const { bytes, contentType } = await build(big, "big.mp3");
      const want = await expected(big, "big.mp3", "audio/mpeg");
      for (const cut of [7, 64, randomCuts(3, 2000, 5000), bytes.length]) {
        expect(await parseToMemory(chunked(bytes, cut), contentType)).toEqual(want);
      }
    });
  }

  test("a split at every byte offset, in two and in three pieces", async () => {
    const { bytes, contentType } = await encodedBody(small.subarray(0, 300), "x.mp3");
    const want = await expected(small.subarray(0, 300), "x.mp3", "audio/mpeg");
    for (let at = 1; at < bytes.length; at++) {
      expect(await parseToMemory(chunked(bytes, [at, bytes.length]), contentType)).toEqual(want);
      expect(await parseToMemory(chunked(bytes, [at, 3, bytes.length]), contentType)).toEqual(want);
    }
  });
});

describe("parseMultipartStream reading RFC 2046 / RFC 7578 details", () => {
  const BOUNDARY = "b0und:ary";
  const body = (text: string) => chunked(utf8(text), 3);
  const typeOf = (boundary = BOUNDARY) => `multipart/form-data; boundary="${boundary}"`;

  test("preamble, transport padding, epilogue, LF-only headers, no Content-Type", async () => {
    const text =
      `This is the preamble.\r\n--${BOUNDARY}  \t\r\n` +
      `Content-Disposition: form-data; name="a"\r\n\r\none\r\n` +
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name=b\n\ntwo\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n\r\nbytes\r\n` +
      `--${BOUNDARY}-- \r\nThis is the epilogue, --${BOUNDARY} and all.`;
    const parsed = await parseToMemory(body(text), typeOf());
    expect(parsed.fields).toEqual([
      ["a", "one"],
      ["b", "two"],
    ]);
    expect(parsed.files).toEqual([
      { name: "f", filename: "x.bin", contentType: "application/octet-stream", size: 5, sha256: await sha256(utf8("bytes")) },
    ]);
  });

  test("filename forms: escapes, a semicolon inside quotes, a Windows path, filename*, empty", async () => {
    const part = (disposition: string) =>
      `--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: audio/wav\r\n\r\n\r\n`;
    const text =
      part(`name="f1"; filename="a \\"b\\"; c.wav"`) +
      part(`name="f2"; filename="C:\\Users\\me\\talk.wav"`) +
      part(`name="f3"; filename="fallback.wav"; filename*=UTF-8''na%C3%AFve%20%E6%97%A5.wav`) +
      part(`name="f4"; filename=""`) +
      part(`name="f5"; filename="%22quoted%22%0D%0A.wav"`) +
      part(`name="f6"; filename*=UTF-8''%E2%82%AC%ZZ.wav`) +
      part(`name="f7"; filename*=ISO-8859-1''caf%E9.wav`) +
      `--${BOUNDARY}--`;
    const parsed = await parseToMemory(body(text), `Multipart/Form-Data; Boundary=${BOUNDARY}`);
    expect(parsed.files.map((f) => f.filename)).toEqual([
      'a "b"; c.wav',
      "C:\\Users\\me\\talk.wav",
      "naïve 日.wav",
      "",
      '"quoted"\r\n.wav',
      // A filename* that does not decode (bad escapes, another charset) still makes a file, named as sent.
      "UTF-8''%E2%82%AC%ZZ.wav",
      "ISO-8859-1''caf%E9.wav",
    ]);
    expect(parsed.files.every((f) => f.contentType === "audio/wav" && f.size === 0)).toBe(true);
  });

  test("an empty form and a part whose body is empty", async () => {
    expect(await parseToMemory(body(`--${BOUNDARY}--\r\n`), typeOf())).toEqual({ fields: [], files: [] });
    const text = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="e"\r\n\r\n\r\n--${BOUNDARY}--`;
    expect((await parseToMemory(body(text), typeOf())).fields).toEqual([["e", ""]]);
  });
});
