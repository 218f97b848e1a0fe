import { describe, expect, test } from "bun:test";
import { FLACDecoder } from "@wasm-audio-decoders/flac";
import { encodeFlac } from "../../src/audio/encode-flac.ts";
import { flacCrc16, flacCrc8, readFlacFrameHeader, writeFlacFrameHeader } from "../../src/audio/flac-frame-header.ts";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { ascii } from "./_fixtures.ts";

/** A tone with int16 extremes mixed in, so any byte-order or sign slip shows. */
function tone(length: number): Int16Array {
  const samples = new Int16Array(length);
  for (let i = 0; i < length; i++) samples[i] = i % 1000 === 0 ? -32768 : i % 1000 === 1 ? 32767 : Math.round(9000 * Math.sin(i / 7));
  return samples;
}

/** Decodes with the libFLAC-based WASM decoder, which checks frame CRCs. */
async function decode(flac: Uint8Array) {
  const decoder = new FLACDecoder();
  await decoder.ready;
  try {
    return await decoder.decodeFile(flac);
  } finally {
    decoder.free();
  }
}

describe("FLAC checksums", () => {
  test("match the published check values", () => {
    // CRC-8 (poly 0x07) and CRC-16/UMTS (poly 0x8005), both initialised to 0, over "123456789".
    expect(flacCrc8(ascii("123456789"))).toBe(0xf4);
    expect(flacCrc16(ascii("123456789"))).toBe(0xfee8);
  });

  test("frame header matches a spec example (block size 20, 44.1 kHz, mono, 16-bit)", () => {
    expect(Array.from(writeFlacFrameHeader(0, 20, 44100, 1, 16))).toEqual([0xff, 0xf8, 0x69, 0x08, 0x00, 0x13, 0x64]);
  });

  test.each([0, 127, 128, 2047, 2048, 65535, 65536, 2 ** 31 - 1])("frame number %p survives its variable-length coding", (n) => {
    const header = writeFlacFrameHeader(n, 4096, 48000, 1, 16);
    expect(readFlacFrameHeader(header, 0)).toEqual({ variable: false, number: n, blockSize: 4096, end: header.length });
  });

  test("a header with a corrupted byte is refused", () => {
    const header = writeFlacFrameHeader(5, 4096, 44100, 1, 16);
    header[4] = header[4]! ^ 1;
    expect(readFlacFrameHeader(header, 0)).toBeNull();
  });
});

describe("encodeFlac", () => {
  test.each([
    [0.5, 44100],
    [3.2, 44100],
    [61, 44100],
    [1.3, 22050],
    [0.7, 12345], // no sample-rate code: written out in Hz after the header
    [0.4, 11000], // written out in kHz
    [0.2, 88210], // written out in tens of Hz
  ])("%p s at %p Hz decodes sample-exact with a real decoder and probes to its duration", async (seconds, rate) => {
    const samples = tone(Math.round(seconds * rate));
    const flac = encodeFlac(samples, rate);
    const decoded = await decode(flac);
    expect(decoded.errors).toEqual([]);
    expect(decoded.sampleRate).toBe(rate);
    expect(decoded.bitDepth).toBe(16);
    expect(decoded.samplesDecoded).toBe(samples.length);
    const channel = decoded.channelData[0]!;
    let worst = 0;
    for (let i = 0; i < samples.length; i++) worst = Math.max(worst, Math.abs(channel[i]! * 32768 - samples[i]!));
    expect(worst).toBeLessThanOrEqual(1); // float scaling only: 1/32767 vs 1/32768
    expect(await probeAudio(bytesFile(flac))).toMatchObject({ format: "flac", durationSeconds: samples.length / rate });
  });

  test("STREAMINFO records block sizes, frame sizes and the total sample count", () => {
    const flac = encodeFlac(tone(10000), 44100);
    const view = new DataView(flac.buffer);
    expect(ascii("fLaC")).toEqual(flac.subarray(0, 4));
    expect(flac[4]).toBe(0x80); // last metadata block, type STREAMINFO
    expect(view.getUint32(4) & 0xffffff).toBe(34);
    expect(view.getUint16(8)).toBe(4096);
    expect(view.getUint16(10)).toBe(4096);
    // Frames 0 and 1: a 6-byte header (the block size has a code), the subframe type byte,
    // 4096 samples and the CRC-16. Frame 2 holds the 1808 left over and spells out its size.
    expect(view.getUint32(12) >>> 8).toBe(8 + 1 + 1808 * 2 + 2);
    expect(view.getUint32(14) & 0xffffff).toBe(6 + 1 + 4096 * 2 + 2);
    expect(view.getUint32(18) >>> 12).toBe(44100);
    expect(view.getUint32(22)).toBe(10000);
  });

  test("an empty input is a valid file with no frames", async () => {
    const flac = encodeFlac(new Int16Array(0), 16000);
    expect(flac.length).toBe(4 + 4 + 34);
    expect(await probeAudio(bytesFile(flac))).toBeNull(); // 0 samples reads as "unknown" and no frame says otherwise
  });

  test("rejects sample rates FLAC cannot store", () => {
    expect(() => encodeFlac(new Int16Array(1), 0)).toThrow(RangeError);
    expect(() => encodeFlac(new Int16Array(1), 2 ** 20)).toThrow(RangeError);
  });
});
