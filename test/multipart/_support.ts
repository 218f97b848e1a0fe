import { parseMultipartStream, type MultipartLimits } from "../../src/multipart/parse-multipart.ts";

/** Helpers shared by the multipart and upload tests: chunked bodies, hashes, test data. */

export const MiB = 1024 * 1024;
export const LOOSE_LIMITS: MultipartLimits = { maxFileBytes: 64 * MiB, maxFieldBytes: MiB, maxParts: 100 };

const encoder = new TextEncoder();

/** `bytes` as a stream, cut where `cut` says: a fixed chunk size, or a list of chunk sizes repeated. */
export function chunked(bytes: Uint8Array, cut: number | readonly number[]): ReadableStream<Uint8Array> {
  const sizes = typeof cut === "number" ? [cut] : cut;
  let offset = 0;
  let turn = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        const size = Math.max(1, sizes[turn++ % sizes.length]!);
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
      },
    },
    { highWaterMark: 0 },
  );
}

/** Chunk sizes from a seeded generator, so a failing split can be replayed. */
export function randomCuts(seed: number, count: number, max: number): number[] {
  let state = seed >>> 0 || 1;
  const cuts: number[] = [];
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    cuts.push(1 + ((state >>> 0) % max));
  }
  return cuts;
}

/** SHA-256 of bytes, in hex. */
export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A whole stream's bytes. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Test data full of traps for a boundary search: every proper prefix of each delimiter given
 * (CRLF, dashes, then part of the boundary), broken CRLFs, and pseudo-random bytes between.
 */
export function trickyBytes(size: number, boundaryPrefixes: readonly string[], seed = 7): Uint8Array<ArrayBuffer> {
  const traps: Uint8Array[] = [encoder.encode("\r\n--"), encoder.encode("\r\r\n-"), encoder.encode("\n\r\n--\r\n\r\n")];
  for (const prefix of boundaryPrefixes) {
    const delimiter = `\r\n--${prefix}`;
    for (let n = 1; n <= delimiter.length; n++) traps.push(encoder.encode(delimiter.slice(0, n)));
  }
  const out = new Uint8Array(size);
  let state = seed;
  let i = 0;
  let t = 0;
  while (i < size) {
    const trap = traps[t++ % traps.length]!;
    out.set(trap.subarray(0, size - i), i);
    i += trap.length;
    for (let k = 0; k < 50 && i < size; k++) {
      state = (state * 1103515245 + 12345) >>> 0;
      out[i++] = state >>> 24;
    }
  }
  return out;
}

/** What a parse produced: fields in order, and each file with its bytes' hash. */
export interface Parsed {
  fields: [string, string][];
  files: { name: string; filename: string; contentType: string; size: number; sha256: string }[];
}

/** Runs parseMultipartStream with collecting handlers. */
export async function parseToMemory(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  limits: MultipartLimits = LOOSE_LIMITS,
): Promise<Parsed> {
  const parsed: Parsed = { fields: [], files: [] };
  await parseMultipartStream(
    body,
    contentType,
    {
      onField: (name, value) => void parsed.fields.push([name, value]),
      onFile(part) {
        const chunks: Uint8Array<ArrayBuffer>[] = [];
        // The parser awaits close(), so the file is recorded before the parse resolves.
        return new WritableStream<Uint8Array>({
          write: (chunk) => void chunks.push(chunk.slice()),
          async close() {
            const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
            parsed.files.push({ ...part, size: bytes.length, sha256: await sha256(bytes) });
          },
        });
      },
    },
    limits,
  );
  return parsed;
}

/** A platform-serialised form (the runtime's own `new Request(url, { body: formData })`). */
export async function platformForm(form: FormData): Promise<{ bytes: Uint8Array<ArrayBuffer>; contentType: string }> {
  const request = new Request("http://localhost/", { method: "POST", body: form });
  // Read first: Bun drops the header it derived from the body once the body is consumed.
  const contentType = request.headers.get("content-type")!;
  return { bytes: new Uint8Array(await request.arrayBuffer()), contentType };
}

/** Encodes text as UTF-8. */
export const utf8 = (text: string) => encoder.encode(text);
