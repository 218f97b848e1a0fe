import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { DEFAULT_UPLOAD_LIMITS, receiveMultipartUpload } from "../../src/uploads/receive-upload.ts";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";
import { MiB, readAll, sha256, trickyBytes, utf8 } from "../multipart/_support.ts";

const CAP = DEFAULT_UPLOAD_LIMITS.maxFileBytes;
const dir = mkdtempSync(join(tmpdir(), "http-upload-test-"));
/** What the server saw of the last request: body bytes it pulled, and the largest temp file observed. */
const seen = { pulled: 0, largestFile: 0 };

/** Request body bytes as the parser pulls them, counted; nothing is read ahead. */
function counted(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen.pulled += value.length;
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** Samples the temp dir while a request runs, keeping the largest file size seen. */
function watchTempDir(): () => void {
  const timer = setInterval(() => {
    for (const name of readdirSync(dir)) {
      try {
        seen.largestFile = Math.max(seen.largestFile, statSync(join(dir, name)).size);
      } catch {} // removed between listing and stat
    }
  }, 1);
  return () => clearInterval(timer);
}

let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const stopWatching = watchTempDir();
      try {
        const contentType = request.headers.get("content-type") ?? "";
        const upload = await receiveMultipartUpload(counted(request.body!), contentType, () => createTempUpload(dir), DEFAULT_UPLOAD_LIMITS);
        const hash = upload.file ? await sha256(await readAll(upload.file.open())) : null;
        await upload.file?.remove();
        return Response.json({ fields: upload.fields, size: upload.file?.size, sha256: hash });
      } catch (error) {
        if (error instanceof GatewayError) return Response.json({ error: error.message }, { status: error.status });
        return Response.json({ error: String(error) }, { status: 500 });
      } finally {
        stopWatching();
      }
    },
  });
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.pulled = 0;
  seen.largestFile = 0;
});

describe("receiveMultipartUpload behind a real HTTP server", () => {
  test("a 3 MB upload posted by fetch arrives whole", async () => {
    const audio = trickyBytes(3 * MiB, ["----WebKitFormBoundary", "--formdata-undici-0"]);
    const form = new FormData();
    form.append("model", "whisper-1");
    form.append("response_format", "verbose_json");
    form.append("file", new File([audio], "speech.mp3", { type: "audio/mpeg" }));
    const response = await fetch(server.url, { method: "POST", body: form });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      fields: { model: "whisper-1", response_format: "verbose_json" },
      size: audio.length,
      sha256: await sha256(audio),
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a 26 MB upload is refused with 413 without the server reading it all", async () => {
    const form = new FormData();
    form.append("model", "whisper-1");
    form.append("file", new File([new Uint8Array(26 * MiB)], "long.mp3", { type: "audio/mpeg" }));
    const response = await fetch(server.url, { method: "POST", body: form });
    expect(response.status).toBe(413);
    expect((await response.json()).error).toContain("25 MB");
    // The parser stops at the first chunk that would pass the cap (Bun hands over about
    // 512 KB at a time), so the last MiB of the body is never read; the file never passes the cap.
    expect(seen.pulled).toBeLessThan(26 * MiB);
    expect(seen.largestFile).toBeGreaterThan(0); // the watcher did see the file grow
    expect(seen.largestFile).toBeLessThanOrEqual(CAP);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a client that would stream 200 MB is cut off near the cap", async () => {
    const boundary = "client-boundary";
    const head = utf8(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\n`);
    const filler = new Uint8Array(64 * 1024);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (sent >= 200 * MiB) return controller.close();
          const chunk = sent === 0 ? head : filler.slice();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const response = await fetch(server.url, {
      method: "POST",
      body,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    await response.body?.cancel();
    // Whatever the socket buffers hold, the client was not allowed to send anywhere near it all.
    expect(sent).toBeLessThan(64 * MiB);
    // Reading stops at the chunk that passes the cap. Bun's chunks grow when the sender is
    // fast: a loaded CI run pulled 1.2 MiB past the cap in one read, so the bound is two.
    expect(seen.pulled).toBeLessThan(CAP + 2 * MiB);
    expect(seen.largestFile).toBeLessThanOrEqual(CAP);
    expect(readdirSync(dir)).toEqual([]);
  });
});
