import { hasAscii } from "./ascii-bytes.ts";
import type { ProbedDuration } from "./probe-audio.ts";
import { flacCrc16, mostFlacSamples, readFlacFrameHeader } from "./flac-frame-header.ts";
import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";

// A 16-bit stereo frame of 4096 samples is at most about 16 KiB; 64 KiB covers common streams.
const TAIL_BYTES = 64 * 1024;
/**
 * Bytes the tail search checks CRCs of, all candidates together. The last frame is among the
 * first few headers found from the end; a tail crafted of back-to-back headers made the search
 * quadratic, holding the event loop for a second per upload.
 */
const CRC_BUDGET_BYTES = 1024 * 1024;

/** Sample rate and total samples from a STREAMINFO body (34 bytes); null when the rate is 0. */
export function readStreamInfo(body: Uint8Array): { sampleRate: number; totalSamples: number; maxBlockSize: number } | null {
  if (body.length < 18) return null;
  const view = viewOf(body);
  const sampleRate = (body[10]! << 12) | (body[11]! << 4) | (body[12]! >> 4);
  const totalSamples = (body[13]! & 0x0f) * 2 ** 32 + view.getUint32(14);
  return sampleRate === 0 ? null : { sampleRate, totalSamples, maxBlockSize: view.getUint16(2) };
}

/**
 * The sample count up to the end of the last frame, found by searching the tail for a frame
 * header whose CRC-16 runs exactly to the end of the file. Used when STREAMINFO says 0
 * ("unknown"), as encoders writing to a pipe leave it.
 */
async function countSamplesFromTail(file: RandomAccessFile, maxBlockSize: number): Promise<number | null> {
  const start = Math.max(0, file.size - TAIL_BYTES);
  const tail = await readRange(file, start, TAIL_BYTES);
  if (tail.length < 2) return null;
  const crc = (tail[tail.length - 2]! << 8) | tail[tail.length - 1]!;
  let budget = CRC_BUDGET_BYTES;
  for (let at = tail.length - 2; at >= 0; at--) {
    const header = tail[at] === 0xff ? readFlacFrameHeader(tail, at) : null;
    if (!header) continue;
    budget -= tail.length - at;
    if (budget < 0) return null;
    if (flacCrc16(tail, at, tail.length - 2) !== crc) continue;
    // A fixed-blocksize stream numbers frames; every frame but the last has the stream's size.
    const first = header.variable ? header.number : header.number * maxBlockSize;
    return first + header.blockSize;
  }
  return null;
}

/** The fLaC marker and the STREAMINFO block, which come before any frame. */
const HEAD_BYTES = 4 + 4 + 34;

/** The duration of a native FLAC stream whose "fLaC" marker is at `start`. */
export async function probeFlac(file: RandomAccessFile, start: number): Promise<ProbedDuration | null> {
  const head = await readRange(file, start, HEAD_BYTES);
  // STREAMINFO must be the first metadata block (type 0, 34 bytes).
  if (!hasAscii(head, 0, "fLaC") || (head[4]! & 0x7f) !== 0) return null;
  const info = readStreamInfo(head.subarray(8));
  if (!info) return null;
  const total = info.totalSamples || (await countSamplesFromTail(file, info.maxBlockSize));
  if (!total) return null;
  return { seconds: total / info.sampleRate, mostSeconds: mostFlacSamples(file.size - start - HEAD_BYTES) / info.sampleRate };
}
