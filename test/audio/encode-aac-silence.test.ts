import { describe, expect, test } from "bun:test";
import { encodeAacSilence } from "../../src/audio/encode-aac-silence.ts";

/**
 * The ADTS frames of a stream, read field by field as ISO/IEC 14496-3 lays them out. (No AAC
 * decoder is on npm to decode it here; ffmpeg decoded these files to digital silence of the
 * right length when the encoder was written.)
 */
function framesOf(aac: Uint8Array) {
  const frames = [];
  for (let at = 0; at < aac.length; ) {
    const b = aac.subarray(at, at + 7);
    const frameBytes = ((b[3]! & 0x03) << 11) | (b[4]! << 3) | (b[5]! >> 5);
    frames.push({
      sync: (b[0]! << 4) | (b[1]! >> 4),
      mpeg4: (b[1]! & 0x08) === 0,
      noCrc: (b[1]! & 0x01) === 1,
      objectType: (b[2]! >> 6) + 1,
      rateIndex: (b[2]! >> 2) & 0x0f,
      channels: ((b[2]! & 0x01) << 2) | (b[3]! >> 6),
      frameBytes,
      blocks: (b[6]! & 0x03) + 1,
      block: [...aac.subarray(at + 7, at + frameBytes)],
    });
    at += frameBytes;
  }
  return frames;
}

describe("encodeAacSilence", () => {
  test.each([
    [0.5, 24_000, 6, 12],
    [7.3, 24_000, 6, 171],
    [2, 44_100, 4, 86],
  ])("%p s at %p Hz: AAC-LC mono ADTS frames (rate index %p), %p of 1024 samples, each one silent block", (seconds, rate, rateIndex, count) => {
    const frames = framesOf(encodeAacSilence(seconds, rate));
    expect(frames).toHaveLength(count);
    expect(Math.abs((count * 1024) / rate - seconds)).toBeLessThanOrEqual(512 / rate);
    for (const frame of frames) {
      expect(frame).toEqual({ sync: 0xfff, mpeg4: true, noCrc: true, objectType: 2, rateIndex, channels: 1, frameBytes: 11, blocks: 1, block: [0x01, 0x40, 0x20, 0x07] });
    }
  });

  test("a zero duration gives one frame; a negative one, or a rate ADTS cannot name, is refused", () => {
    expect(framesOf(encodeAacSilence(0, 24_000))).toHaveLength(1);
    expect(() => encodeAacSilence(-1, 24_000)).toThrow(RangeError);
    expect(() => encodeAacSilence(1, 23_000)).toThrow(RangeError);
  });
});
