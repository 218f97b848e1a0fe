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
