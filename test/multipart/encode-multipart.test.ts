import { describe, expect, test } from "bun:test";
import { encodeMultipart, type MultipartFile } from "../../src/multipart/encode-multipart.ts";
import { chunked, MiB, parseToMemory, readAll, sha256, trickyBytes } from "./_support.ts";

/** A MultipartFile over bytes in memory, counting how often it was opened. */
function memoryFile(bytes: Uint8Array, overrides: Partial<MultipartFile> = {}) {
  const opens = { count: 0 };
  const file: MultipartFile = {
    field: "file",
    filename: "speech.mp3",
    contentType: "audio/mpeg",
    size: bytes.length,
    open() {
      opens.count++;
      return chunked(bytes, 65536);
    },
    ...overrides,
  };
  return { file, opens };
}

describe("encodeMultipart", () => {
  const fields: [string, string][] = [
    ["model", "whisper-1"],
    ["language", "fr"],
    ["prompt", "Ünïcödé ✓ and a line\r\nbreak"],
    ["timestamp_granularities[]", "word"],
    ["timestamp_granularities[]", "segment"],
  ];

  test("contentLength is the exact byte count, and the platform's formData() reads it back", async () => {
    const data = trickyBytes(2 * MiB + 17, ["gateway-"]);
    const { file } = memoryFile(data);
    const encoded = encodeMultipart(fields, file);
    const bytes = await readAll(encoded.body);
    expect(bytes.length).toBe(encoded.contentLength);
    expect(encoded.contentType).toMatch(/^multipart\/form-data; boundary=gateway-[0-9A-Za-z]{24}$/);

    const form = await new Request("http://localhost/", {
      method: "POST",
      body: bytes,
      headers: { "content-type": encoded.contentType, "content-length": String(encoded.contentLength) },
    }).formData();
    const texts = [...form.entries()].filter((entry): entry is [string, string] => typeof entry[1] === "string");
    expect(texts).toEqual(fields);
    const received = form.get("file");
    expect(received).toBeInstanceOf(File);
    expect((received as File).name).toBe("speech.mp3");
    expect((received as File).type).toBe("audio/mpeg");
    expect(await sha256(new Uint8Array(await (received as File).arrayBuffer()))).toBe(await sha256(data));
  });

  test("the body is a stream: the file is opened on the first read, not before", async () => {
    const { file, opens } = memoryFile(new Uint8Array(10));
    const encoded = encodeMultipart([], file);
    expect(opens.count).toBe(0);
    await readAll(encoded.body);
    expect(opens.count).toBe(1);
  });

  test("quotes, CR and LF in names and filename are escaped; parseMultipartStream decodes them back", async () => {
    const { file } = memoryFile(new Uint8Array([1, 2, 3]), { filename: 'my "talk"\r\n.wav', contentType: "audio/wav\r\nX-Evil: 1" });
    const encoded = encodeMultipart([['na"me\r\n', "v"]], file);
    const bytes = await readAll(encoded.body);
    const text = new TextDecoder().decode(bytes);
    expect(text).toContain('name="na%22me%0D%0A"');
    expect(text).toContain('filename="my %22talk%22%0D%0A.wav"');
    expect(text).toContain("Content-Type: audio/wavX-Evil: 1\r\n");
    expect(text.split("\r\n").some((line) => line.startsWith("X-Evil"))).toBe(false);
    expect(bytes.length).toBe(encoded.contentLength);

    // Bun's and Deno's formData() leave %22 as is (Node's undici decodes it), so the check is ours.
    const parsed = await parseToMemory(chunked(bytes, 5), encoded.contentType);
    expect(parsed.fields).toEqual([['na"me\r\n', "v"]]);
    expect(parsed.files[0]!.filename).toBe('my "talk"\r\n.wav');
  });

  test("an empty file and no fields still make a valid body of the announced length", async () => {
    const { file } = memoryFile(new Uint8Array(0));
    const encoded = encodeMultipart([], file);
    const bytes = await readAll(encoded.body);
    expect(bytes.length).toBe(encoded.contentLength);
    const form = await new Request("http://localhost/", { method: "POST", body: bytes, headers: { "content-type": encoded.contentType } }).formData();
    expect((form.get("file") as File).size).toBe(0);
  });

  test("a file shorter or longer than its size errors the stream rather than break Content-Length", async () => {
    for (const size of [99, 101]) {
      const { file } = memoryFile(new Uint8Array(100), { size });
      const error = await readAll(encodeMultipart([], file).body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(String(size));
    }
  });

  test("cancelling the body cancels the file stream", async () => {
    let cancelled = false;
    const encoded = encodeMultipart([], {
      ...memoryFile(new Uint8Array(0)).file,
      size: 1000,
      open: () => new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(10)), cancel: () => void (cancelled = true) }),
    });
    const reader = encoded.body.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel("done");
    expect(cancelled).toBe(true);
  });
});
