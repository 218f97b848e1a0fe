/**
 * A file the audio probes can read at any offset without holding it all in memory. Runtime
 * adapters wrap their own file handles in it; callers holding bytes already use `bytesFile`.
 */
export interface RandomAccessFile {
  /** Total length in bytes. */
  size: number;
  /** Up to `length` bytes starting at `offset`; fewer only at the end of the file. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A RandomAccessFile over bytes already in memory. */
export function bytesFile(bytes: Uint8Array): RandomAccessFile {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
  };
}

/**
 * Reads `length` bytes at `offset`, clipped to the file, so a probe never asks a reader for
 * bytes past the end (some readers throw there, others return short).
 */
export async function readRange(file: RandomAccessFile, offset: number, length: number): Promise<Uint8Array> {
  const start = Math.max(0, Math.min(offset, file.size));
  const end = Math.max(start, Math.min(offset + length, file.size));
  if (end === start) return new Uint8Array(0);
  const bytes = await file.read(start, end - start);
  return bytes.length > end - start ? bytes.subarray(0, end - start) : bytes;
}

/** A DataView over exactly the bytes of `bytes` (it may be a view into a larger buffer). */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** How much a windowed file reads at once: many box or element headers in one read. */
const WINDOW_BYTES = 256 * 1024;

/**
 * `file` read through a window of WINDOW_BYTES: a walk over many small headers in order (a
 * fragmented MP4's boxes) then reads the disk once per window, not once per header. A crafted
 * M4A of 100,000 tiny boxes took 100,000 reads and 4 s to refuse.
 */
export function windowedFile(file: RandomAccessFile): RandomAccessFile {
  let windowStart = 0;
  let window: Uint8Array = new Uint8Array(0);
  return {
    size: file.size,
    async read(offset, length) {
      if (offset >= windowStart && offset + length <= windowStart + window.length) {
        return window.subarray(offset - windowStart, offset - windowStart + length);
      }
      if (length >= WINDOW_BYTES) return file.read(offset, length);
      // A new buffer each time, never refilled: a view handed out earlier stays valid.
      window = await readRange(file, offset, WINDOW_BYTES);
      windowStart = offset;
      return window.subarray(0, length);
    },
  };
}
