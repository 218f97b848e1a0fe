import { concatBytes } from "../lib/concat-bytes.ts";
import { writeAscii } from "./ascii-bytes.ts";
import { flacCrc16, writeFlacFrameHeader } from "./flac-frame-header.ts";

/** Samples per frame; every frame but the last holds this many. */
export const FLAC_BLOCK_SIZE = 4096;
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
  view.setUint16(4, FLAC_BLOCK_SIZE);
  view.setUint16(6, FLAC_BLOCK_SIZE);
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

/** The bytes of frame `frameNumber` holding `blockSamples` samples. */
function frameBytes(frameNumber: number, blockSamples: number, sampleRate: number): number {
  return writeFlacFrameHeader(frameNumber, blockSamples, sampleRate, 1, 16).length + 1 + blockSamples * 2 + 2;
}

/**
 * The start of a FLAC file of `totalSamples` 16-bit mono samples: the fLaC marker and
 * STREAMINFO. `encodeFlacFrames` writes the frames that follow, so a long file can be made
 * a slice at a time.
 */
export function flacStreamHeader(totalSamples: number, sampleRate: number): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate >= 2 ** 20) {
    throw new RangeError(`invalid FLAC sample rate ${sampleRate}`);
  }
  const frames = Math.ceil(totalSamples / FLAC_BLOCK_SIZE);
  // Frames differ only in the coded frame number, whose length grows with it, and in the
  // last one's block: the smallest and the largest are among the first, the last full one
  // and the last.
  const sizes = [...new Set([0, frames - 2, frames - 1])]
    .filter((frame) => frame >= 0 && frame < frames)
    .map((frame) => frameBytes(frame, Math.min(FLAC_BLOCK_SIZE, totalSamples - frame * FLAC_BLOCK_SIZE), sampleRate));
  const info = encodeStreamInfo(sampleRate, totalSamples, sizes.length ? Math.min(...sizes) : 0, sizes.length ? Math.max(...sizes) : 0);
  const out = new Uint8Array(4 + info.length);
  writeAscii(out, 0, "fLaC");
  out.set(info, 4);
  return out;
}

/**
 * The frames of `samples`, the first numbered `firstFrame`, one per FLAC_BLOCK_SIZE samples
 * (the last may be shorter, so only the end of the stream may hold a partial block).
 */
export function encodeFlacFrames(samples: Int16Array, firstFrame: number, sampleRate: number): Uint8Array {
  const frames: Uint8Array[] = [];
  for (let start = 0; start < samples.length; start += FLAC_BLOCK_SIZE) {
    frames.push(encodeFrame(samples.subarray(start, start + FLAC_BLOCK_SIZE), firstFrame + start / FLAC_BLOCK_SIZE, sampleRate));
  }
  return concatBytes(frames);
}

/**
 * A FLAC file of 16-bit mono `samples`: the fLaC marker, STREAMINFO and fixed-size frames of
 * VERBATIM subframes. Uncompressed on purpose: it is for mock audio, where simple beats small.
 */
export function encodeFlac(samples: Int16Array, sampleRate: number): Uint8Array {
  return concatBytes([flacStreamHeader(samples.length, sampleRate), encodeFlacFrames(samples, 0, sampleRate)]);
}
