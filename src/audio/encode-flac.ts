import { writeAscii } from "./ascii-bytes.ts";
import { flacCrc16, writeFlacFrameHeader } from "./flac-frame-header.ts";

const BLOCK_SIZE = 4096;
const STREAMINFO_BYTES = 34;
// A VERBATIM subframe with no wasted bits: zero pad bit, type 0b000001, wasted-bits flag 0.
const VERBATIM_SUBFRAME = 0x02;

/** One frame: header, a VERBATIM subframe of big-endian 16-bit samples, CRC-16. */
function encodeFrame(samples: Int16Array, frameNumber: number, sampleRate: number): Uint8Array {
  const header = writeFlacFrameHeader(frameNumber, samples.length, sampleRate, 1, 16);
  const frame = new Uint8Array(header.length + 1 + samples.length * 2 + 2);
  const view = new DataView(frame.buffer);
  frame.set(header, 0);
  frame[header.length] = VERBATIM_SUBFRAME;
  // Whole bytes throughout, so the frame ends byte-aligned with no padding bits to add.
  for (let i = 0; i < samples.length; i++) view.setInt16(header.length + 1 + i * 2, samples[i]!, false);
  view.setUint16(frame.length - 2, flacCrc16(frame, 0, frame.length - 2), false);
  return frame;
}

/** Writes a big-endian 24-bit value (STREAMINFO frame sizes). */
function setUint24(view: DataView, offset: number, value: number): void {
  view.setUint8(offset, value >>> 16);
  view.setUint16(offset + 1, value & 0xffff);
}

/** The STREAMINFO block (header included, marked last). MD5 stays zero: "unknown" per the spec. */
function encodeStreamInfo(sampleRate: number, totalSamples: number, minFrame: number, maxFrame: number): Uint8Array {
  const block = new Uint8Array(4 + STREAMINFO_BYTES);
  const view = new DataView(block.buffer);
  view.setUint8(0, 0x80); // last-metadata-block flag set, block type 0 (STREAMINFO)
  setUint24(view, 1, STREAMINFO_BYTES);
  view.setUint16(4, BLOCK_SIZE);
  view.setUint16(6, BLOCK_SIZE);
  setUint24(view, 8, minFrame);
  setUint24(view, 11, maxFrame);
  const channelsMinusOne = 0;
  const bitsMinusOne = 15;
  // Sample rate (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36).
  view.setUint8(14, sampleRate >>> 12);
  view.setUint8(15, (sampleRate >>> 4) & 0xff);
  view.setUint8(16, ((sampleRate & 0x0f) << 4) | (channelsMinusOne << 1) | (bitsMinusOne >> 4));
  view.setUint8(17, ((bitsMinusOne & 0x0f) << 4) | Math.floor(totalSamples / 2 ** 32));
  view.setUint32(18, totalSamples >>> 0);
  return block;
}

/**
 * A FLAC file of 16-bit mono `samples`: the fLaC marker, STREAMINFO and fixed-size frames of
 * VERBATIM subframes. Uncompressed on purpose: it is for mock audio, where simple beats small.
 */
export function encodeFlac(samples: Int16Array, sampleRate: number): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate >= 2 ** 20) {
    throw new RangeError(`invalid FLAC sample rate ${sampleRate}`);
  }
  const frames: Uint8Array[] = [];
  for (let start = 0; start < samples.length; start += BLOCK_SIZE) {
    frames.push(encodeFrame(samples.subarray(start, start + BLOCK_SIZE), start / BLOCK_SIZE, sampleRate));
  }
  const sizes = frames.map((frame) => frame.length);
  const info = encodeStreamInfo(sampleRate, samples.length, sizes.length ? Math.min(...sizes) : 0, sizes.length ? Math.max(...sizes) : 0);
  const out = new Uint8Array(4 + info.length + sizes.reduce((sum, size) => sum + size, 0));
  writeAscii(out, 0, "fLaC");
  out.set(info, 4);
  let at = 4 + info.length;
  for (const frame of frames) {
    out.set(frame, at);
    at += frame.length;
  }
  return out;
}
