import type { Stats } from "node:fs";
import { lstat, mkdir, mkdtemp, open, rm, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBase62 } from "../lib/random-id.ts";
import type { TempUpload } from "../uploads/temp-upload.ts";

// Node's fs, os and path modules, which Bun, Deno and Node all provide: one implementation
// of TempUpload for every runtime, injected into the core through RuntimeHost.

/** Where uploads go unless a directory is given. */
export const DEFAULT_UPLOAD_DIR = join(tmpdir(), "gateway-uploads");

const READ_CHUNK_BYTES = 64 * 1024;

/** The private folder made in place of each upload folder that was not this user's alone. */
const madeInstead = new Map<string, string>();

/** Whether a folder is a real one (not a link) of this user's, that no one else may write in. */
function isPrivateFolder(found: Stats | null): boolean {
  const uid = process.getuid?.();
  return found !== null && found.isDirectory() && (uid === undefined || found.uid === uid) && (found.mode & 0o022) === 0;
}

/**
 * `dir`, made if missing, when it is this user's alone. A shared temp folder lets any local
 * user make `gateway-uploads` first; its owner could then swap an upload between its write and
 * its read. In that case a private folder (mkdtemp, 0700) beside it is used instead. Checked
 * at each upload, since a temp cleaner may remove either folder while the gateway runs.
 */
async function uploadFolder(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (isPrivateFolder(await lstat(dir))) return dir;
  const made = madeInstead.get(dir);
  if (made !== undefined && isPrivateFolder(await lstat(made).catch(() => null))) return made;
  const fresh = await mkdtemp(`${dir}-`);
  madeInstead.set(dir, fresh);
  return fresh;
}

/** Creates an empty temp file, private to this user (0600) and under a random name, in `dir` (see uploadFolder). */
export async function createTempUpload(dir: string = DEFAULT_UPLOAD_DIR): Promise<TempUpload> {
  const path = join(await uploadFolder(dir), `upload-${randomBase62(24)}`);
  // "wx" fails rather than reuse a file that is already there.
  return new TempFileUpload(path, await open(path, "wx", 0o600));
}

class TempFileUpload implements TempUpload {
  readonly writable: WritableStream<Uint8Array>;
  private written = 0;
  private complete = false;
  private reading: Promise<FileHandle> | null = null;
  private removing: Promise<void> | null = null;

  constructor(
    readonly path: string,
    private writing: FileHandle | null,
  ) {
    this.writable = new WritableStream<Uint8Array>({
      write: (chunk) => this.write(chunk),
      close: async () => {
        await this.closeWriting();
        this.complete = true;
      },
      abort: () => this.closeWriting(),
    });
  }

  get size(): number {
    return this.written;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
      throw new RangeError(`Cannot read ${length} bytes at offset ${offset}`);
    }
    this.assertReadable();
    const buffer = new Uint8Array(Math.max(0, Math.min(length, this.written - offset)));
    this.reading ??= open(this.path, "r");
    const handle = await this.reading;
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === buffer.length ? buffer : buffer.subarray(0, filled);
  }

  open(): ReadableStream<Uint8Array> {
    this.assertReadable();
    let position = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = await this.read(position, READ_CHUNK_BYTES);
        if (chunk.length === 0) return controller.close();
        position += chunk.length;
        controller.enqueue(chunk);
      },
    });
  }

  remove(): Promise<void> {
    this.removing ??= this.closeAll().then(() => rm(this.path, { force: true }));
    return this.removing;
  }

  private async write(chunk: Uint8Array): Promise<void> {
    const handle = this.writing;
    if (handle === null) throw new Error("The temp upload is closed");
    let done = 0;
    while (done < chunk.length) {
      const { bytesWritten } = await handle.write(chunk, done, chunk.length - done);
      done += bytesWritten;
      this.written += bytesWritten;
    }
  }

  private async closeWriting(): Promise<void> {
    const handle = this.writing;
    this.writing = null;
    await handle?.close();
  }

  /** Closes both handles first: some platforms will not delete a file that is still open. */
  private async closeAll(): Promise<void> {
    const reading = this.reading;
    this.reading = null;
    await this.closeWriting().catch(() => {});
    await reading?.then((handle) => handle.close()).catch(() => {});
  }

  private assertReadable(): void {
    if (this.removing) throw new Error("The temp upload was removed");
    if (!this.complete) throw new Error("The temp upload is still being written");
  }
}
