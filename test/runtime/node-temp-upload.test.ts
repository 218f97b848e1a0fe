import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createTempUpload, DEFAULT_UPLOAD_DIR } from "../../src/runtime/node-temp-upload.ts";
import type { TempUpload } from "../../src/uploads/temp-upload.ts";
import { chunked, MiB, readAll, sha256, trickyBytes } from "../multipart/_support.ts";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "temp-upload-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A temp upload holding `bytes`, written through its writable in uneven chunks. */
async function filled(bytes: Uint8Array): Promise<TempUpload> {
  const upload = await createTempUpload(dir);
  await chunked(bytes, [1, 4096, 70_000, 3]).pipeTo(upload.writable);
  return upload;
}

describe("createTempUpload", () => {
  test("writes a private file under a random name, and reports its size", async () => {
    const data = trickyBytes(MiB + 5, []);
    const upload = await filled(data);
    expect(dirname(upload.path)).toBe(dir);
    expect(upload.size).toBe(data.length);
    const info = await stat(upload.path);
    expect(info.size).toBe(data.length);
    if (process.platform !== "win32") expect(info.mode & 0o777).toBe(0o600);
    const other = await createTempUpload(dir);
    expect(other.path).not.toBe(upload.path);
    await Promise.all([upload.remove(), other.remove()]);
  });

  test("read(offset, length) gives random access, clipped at the end", async () => {
    const data = trickyBytes(200_000, []);
    const upload = await filled(data);
    expect(await upload.read(0, 10)).toEqual(data.subarray(0, 10));
    expect(await upload.read(123_456, 5000)).toEqual(data.subarray(123_456, 128_456));
    expect(await upload.read(199_990, 100)).toEqual(data.subarray(199_990));
    expect((await upload.read(200_000, 10)).length).toBe(0);
    expect((await upload.read(500_000, 10)).length).toBe(0);
    expect((await upload.read(5, 0)).length).toBe(0);
    await expect(upload.read(-1, 10)).rejects.toThrow(RangeError);
    await expect(upload.read(0, 1.5)).rejects.toThrow(RangeError);
    const [a, b] = await Promise.all([upload.read(1000, 64), upload.read(50_000, 64)]);
    expect(a).toEqual(data.subarray(1000, 1064));
    expect(b).toEqual(data.subarray(50_000, 50_064));
    await upload.remove();
  });

  test("open() streams the whole file in chunks, as often as asked", async () => {
    const data = trickyBytes(3 * MiB + 1, []);
    const upload = await filled(data);
    const reader = upload.open().getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeLessThanOrEqual(64 * 1024);
    await reader.cancel();
    expect(await sha256(await readAll(upload.open()))).toBe(await sha256(data));
    expect(await sha256(await readAll(upload.open()))).toBe(await sha256(data));
    await upload.remove();
  });

  test("reading before the writable has closed is refused", async () => {
    const upload = await createTempUpload(dir);
    const writer = upload.writable.getWriter();
    await writer.write(new Uint8Array(10));
    await expect(upload.read(0, 5)).rejects.toThrow("still being written");
    expect(() => upload.open()).toThrow("still being written");
    await writer.close();
    expect((await upload.read(0, 5)).length).toBe(5);
    await upload.remove();
  });

  test("remove() deletes the file, may be called again, and does not mind it already gone", async () => {
    const upload = await filled(new Uint8Array(100));
    await upload.read(0, 10); // a read handle is open now
    await upload.remove();
    await upload.remove();
    expect(await readdir(dir)).toEqual([]);
    await expect(upload.read(0, 1)).rejects.toThrow("removed");

    const gone = await filled(new Uint8Array(100));
    await rm(gone.path);
    await gone.remove();
  });

  test("remove() during an unfinished or aborted write closes the file and deletes it", async () => {
    const open = await createTempUpload(dir);
    await open.writable.getWriter().write(new Uint8Array(10));
    await open.remove();
    const aborted = await createTempUpload(dir);
    const writer = aborted.writable.getWriter();
    await writer.write(new Uint8Array(10));
    await writer.abort(new Error("client went away"));
    await aborted.remove();
    expect(await readdir(dir)).toEqual([]);
  });

  test("by default files go to gateway-uploads in the OS temp dir", async () => {
    const upload = await createTempUpload();
    expect(dirname(upload.path)).toBe(DEFAULT_UPLOAD_DIR);
    expect(DEFAULT_UPLOAD_DIR).toBe(join(tmpdir(), "gateway-uploads"));
    await upload.writable.close();
    await upload.remove();
    await expect(stat(upload.path)).rejects.toThrow();
  });
});
