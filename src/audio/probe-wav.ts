import { hasAscii } from "./ascii-bytes.ts";
import type { ProbedDuration } from "./probe-audio.ts";
import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";

// Chunks before `data` are few (fmt, fact, LIST, bext...); this bounds the walk on bad input.
const MAX_CHUNKS = 64;
// Streaming writers that cannot seek back leave the size fields at this value (or 0).
const UNKNOWN_SIZE = 0xffffffff;
// The byte rate is the header's word; no codec a WAVE file carries stores audio in fewer
// bytes a second than this (the sparest, LPC-10 at 2.4 kbit/s, takes 300).
const FEWEST_BYTES_PER_SECOND = 100;

/**
 * The duration of a RIFF/WAVE (or RF64) file: `data` bytes over the `fmt ` byte rate. A data
 * size that is unknown or runs past the end of the file (a stream cut short, or written
 * before its length was known) is taken to be the rest of the file.
 */
export async function probeWav(file: RandomAccessFile): Promise<ProbedDuration | null> {
  let byteRate = 0;
  let offset = 12;
  for (let chunk = 0; chunk < MAX_CHUNKS && offset + 8 <= file.size; chunk++) {
    const head = await readRange(file, offset, 8);
    const size = viewOf(head).getUint32(4, true);
    if (hasAscii(head, 0, "fmt ")) {
      const fmt = await readRange(file, offset + 8, 16);
      if (fmt.length < 16) return null;
      byteRate = viewOf(fmt).getUint32(8, true);
    } else if (hasAscii(head, 0, "data")) {
      if (byteRate === 0) return null;
      const rest = file.size - (offset + 8);
      const dataBytes = size === UNKNOWN_SIZE || size === 0 || size > rest ? rest : size;
      return { seconds: dataBytes / byteRate, mostSeconds: dataBytes / FEWEST_BYTES_PER_SECOND };
    }
    // Chunks are padded to an even length.
    offset += 8 + size + (size & 1);
  }
  return null;
}
