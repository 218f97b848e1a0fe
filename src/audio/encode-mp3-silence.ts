import { writeAscii } from "./ascii-bytes.ts";
import { readMpegAudioHeader } from "./mpeg-audio-header.ts";

// MPEG-1 Layer III, no CRC; 128 kbit/s, 44.1 kHz, no padding; mono, no emphasis.
const HEADER = Uint8Array.of(0xff, 0xfb, 0x90, 0xc0);
const FRAME = readMpegAudioHeader(HEADER, 0)!;
// Info tag flags: the frame count and byte count fields are present.
const INFO_FLAGS = 0x1 | 0x2;

/**
 * An MP3 of silence lasting `durationSeconds` rounded to whole frames (1152 samples at
 * 44.1 kHz, about 26 ms), at least one. Frames are a header and all-zero side info and main
 * data: zero granule lengths and gains, which decoders play as silence. A LAME-style "Info"
 * frame goes first so players report the exact frame count instead of estimating it.
 */
export function encodeMp3Silence(durationSeconds: number): Uint8Array {
  if (!(durationSeconds >= 0) || !Number.isFinite(durationSeconds)) throw new RangeError(`invalid duration ${durationSeconds}`);
  const frames = Math.max(1, Math.round((durationSeconds * FRAME.sampleRate) / FRAME.samplesPerFrame));
  const out = new Uint8Array((frames + 1) * FRAME.frameBytes);
  for (let at = 0; at < out.length; at += FRAME.frameBytes) out.set(HEADER, at);
  // The Info frame counts the audio frames after it, not itself, as decoders expect.
  const view = new DataView(out.buffer);
  writeAscii(out, FRAME.xingOffset, "Info");
  view.setUint32(FRAME.xingOffset + 4, INFO_FLAGS);
  view.setUint32(FRAME.xingOffset + 8, frames);
  view.setUint32(FRAME.xingOffset + 12, out.length);
  return out;
}
