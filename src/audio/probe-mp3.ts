import { hasAscii } from "./ascii-bytes.ts";
import type { ProbedDuration } from "./probe-audio.ts";
import { readMpegAudioHeader, type MpegAudioHeader } from "./mpeg-audio-header.ts";
import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";

// Enough for zero padding after a tag plus two of the largest frames (1,728 bytes).
const WINDOW_BYTES = 16 * 1024;
const MAX_ZERO_PADDING = 8 * 1024;
const ID3V1_BYTES = 128;
// MPEG audio's lowest bitrate is 8 kbit/s, 1,000 bytes a second; frame sizes rounded down
// take up to 2% off that, so 800 leaves room: a file holds at most a second per 800 bytes.
const FEWEST_BYTES_PER_SECOND = 800;

/** True when the frame after `first` starts with a header of the same stream kind. */
function hasMatchingNext(bytes: Uint8Array, at: number, first: MpegAudioHeader): boolean {
  const next = readMpegAudioHeader(bytes, at + first.frameBytes);
  return next !== null && next.version === first.version && next.layer === first.layer && next.sampleRate === first.sampleRate;
}

/** The frame count from a Xing/Info or VBRI tag in the first frame, or null when it has none. */
function taggedFrameCount(bytes: Uint8Array, at: number, header: MpegAudioHeader): number | null {
  const view = viewOf(bytes);
  const xing = at + header.xingOffset;
  if ((hasAscii(bytes, xing, "Xing") || hasAscii(bytes, xing, "Info")) && xing + 12 <= bytes.length) {
    return view.getUint32(xing + 4) & 0x1 ? view.getUint32(xing + 8) : null;
  }
  // VBRI (Fraunhofer) sits 32 bytes after the header whatever the channel mode.
  const vbri = at + 36;
  if (hasAscii(bytes, vbri, "VBRI") && vbri + 18 <= bytes.length) return view.getUint32(vbri + 14);
  return null;
}

/**
 * The duration of an MPEG audio stream starting at `start` (after any ID3v2 tag), or null
 * when no two consecutive valid frame headers are there: one header's worth of bits turns
 * up by chance in arbitrary data far too often to go on. Uses the frame count of a
 * Xing/Info/VBRI tag when there is one; otherwise assumes constant bitrate.
 */
export async function probeMp3(file: RandomAccessFile, start: number): Promise<ProbedDuration | null> {
  const bytes = await readRange(file, start, WINDOW_BYTES);
  let at = 0;
  while (at < MAX_ZERO_PADDING && bytes[at] === 0) at++;
  const first = readMpegAudioHeader(bytes, at);
  if (!first || !hasMatchingNext(bytes, at, first)) return null;
  const mostSeconds = file.size / FEWEST_BYTES_PER_SECOND;
  const frames = taggedFrameCount(bytes, at, first);
  if (frames !== null) return { seconds: (frames * first.samplesPerFrame) / first.sampleRate, mostSeconds };
  const tail = await readRange(file, file.size - ID3V1_BYTES, 3);
  const end = hasAscii(tail, 0, "TAG") ? file.size - ID3V1_BYTES : file.size;
  return { seconds: (Math.max(0, end - start - at) * 8) / first.bitrate, mostSeconds };
}
