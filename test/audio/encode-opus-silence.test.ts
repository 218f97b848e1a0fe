import { describe, expect, test } from "bun:test";
import { OggOpusDecoder } from "ogg-opus-decoder";
import { encodeOpusSilence } from "../../src/audio/encode-opus-silence.ts";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { oggCrc32 } from "../../src/audio/probe-ogg.ts";

/** Decodes with libopus (WASM), which checks each page's CRC and applies the pre-skip. */
async function decode(opus: Uint8Array) {
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    return await decoder.decodeFile(opus);
  } finally {
    decoder.free();
  }
}

/** The Ogg pages of a file: their header type flags, granule positions and whether their CRC holds. */
function pagesOf(ogg: Uint8Array) {
  const pages = [];
  for (let at = 0; at < ogg.length; ) {
    expect(String.fromCharCode(...ogg.subarray(at, at + 4))).toBe("OggS");
    const view = new DataView(ogg.buffer, ogg.byteOffset + at);
    const segments = ogg[at + 26]!;
    let length = 27 + segments;
    for (let i = 0; i < segments; i++) length += ogg[at + 27 + i]!;
    const page = ogg.slice(at, at + length);
    const crc = view.getUint32(22, true);
    page.fill(0, 22, 26);
    pages.push({ flags: ogg[at + 5]!, granule: Number(view.getBigUint64(6, true)), crcHolds: oggCrc32(page) === crc });
    at += length;
  }
  return pages;
}

describe("encodeOpusSilence", () => {
  test.each([0.5, 3.27, 61])("%p s decodes with libopus to silence of that length, within one 20 ms frame", async (seconds) => {
    const decoded = await decode(encodeOpusSilence(seconds, 24_000));
    expect(decoded.errors).toEqual([]);
    expect(decoded.sampleRate).toBe(48_000);
    expect(Math.abs(decoded.samplesDecoded / 48_000 - seconds)).toBeLessThanOrEqual(0.02);
    // Silence as CELT decodes it: values near 1e-34 (its guard against denormals), far below
    // the least step of 16-bit audio (3e-5).
    for (const channel of decoded.channelData) expect(channel.every((sample) => Math.abs(sample) < 1e-9)).toBe(true);
  });

  test("the gateway's own probe reads the exact length from the last page's granule, less the pre-skip", async () => {
    const probe = await probeAudio(bytesFile(encodeOpusSilence(3.27, 24_000)));
    expect(probe).toMatchObject({ format: "ogg" });
    expect(probe!.durationSeconds).toBeCloseTo(3.27, 6);
  });

  test("pages: OpusHead alone on a first page, then OpusTags, then audio to an end-of-stream page; every CRC holds", () => {
    const ogg = encodeOpusSilence(12, 24_000);
    const pages = pagesOf(ogg);
    expect(String.fromCharCode(...ogg.subarray(28, 36))).toBe("OpusHead");
    expect(pages[0]).toEqual({ flags: 0x02, granule: 0, crcHolds: true });
    expect(pages[1]).toEqual({ flags: 0, granule: 0, crcHolds: true });
    // 600 frames of 20 ms: 255 to a page.
    expect(pages.slice(2).map((page) => page.flags)).toEqual([0, 0, 0x04]);
    expect(pages.at(-1)!.granule).toBe(312 + 12 * 48_000);
    expect(pages.every((page) => page.crcHolds)).toBe(true);
  });

  test("a zero duration still gives one frame; a negative one is refused", async () => {
    expect((await decode(encodeOpusSilence(0, 24_000))).errors).toEqual([]);
    expect(() => encodeOpusSilence(-1, 24_000)).toThrow(RangeError);
    expect(() => encodeOpusSilence(Number.NaN, 24_000)).toThrow(RangeError);
  });
});
