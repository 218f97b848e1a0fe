import type { RandomAccessFile } from "../audio/random-access-file.ts";

/** An upload spooled to a private temp file: written once, then read any number of times, then removed. */
export interface TempUpload extends RandomAccessFile {
  readonly path: string;
  /** Receives the upload. `size` counts the bytes written, and is final once this has closed. */
  readonly writable: WritableStream<Uint8Array>;
  /** The whole file as a stream, one chunk read per pull. */
  open(): ReadableStream<Uint8Array>;
  /** Deletes the file; safe to call again, or after the file is already gone. */
  remove(): Promise<void>;
}

/** Makes an empty private temp file for one upload: the runtime's file system, injected. */
export type CreateTempUpload = () => Promise<TempUpload>;
