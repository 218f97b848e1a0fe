import { describe, expect, test } from "bun:test";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { oggCrc32 } from "../../src/audio/probe-ogg.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { ascii, concat, noise, oggPage, sparseFile, uintLE } from "./_fixtures.ts";

const BOS = 0x02;
const EOS = 0x04;
const SERIAL = 0x1234abcd;

/** An OpusHead packet (RFC 7845 section 5.1): mono, the given pre-skip, input rate 44.1 kHz. */
function opusHead(preSkip: number): Uint8Array {
  return concat(ascii("OpusHead"), Uint8Array.of(1, 1), uintLE(preSkip, 2), uintLE(44100, 4), uintLE(0, 2), Uint8Array.of(0));
}

/** A Vorbis identification header (Vorbis I spec section 4.2.2). */
function vorbisId(sampleRate: number): Uint8Array {
  return concat(Uint8Array.of(1), ascii("vorbis"), uintLE(0, 4), Uint8Array.of(2), uintLE(sampleRate, 4), uintLE(0, 12), Uint8Array.of(0xb8, 1));
}

/** A stream: the codec header page, a comment page, audio pages ending at `lastGranule`. */
function stream(head: Uint8Array, granules: readonly bigint[], serial = SERIAL): Uint8Array[] {
  const pages = [oggPage({ serial, sequence: 0, granule: 0n, headerType: BOS, packet: head })];
  pages.push(oggPage({ serial, sequence: 1, granule: 0n, headerType: 0, packet: ascii("comments") }));
  granules.forEach((granule, i) => {
    const last = i === granules.length - 1;
    pages.push(oggPage({ serial, sequence: 2 + i, granule, headerType: last ? EOS : 0, packet: noise(3000, 10 + i) }));
  });
  return pages;
}

describe("probeAudio: Ogg", () => {
  test("uses the Ogg CRC-32 (poly 0x04C11DB7, init 0, unreflected)", () => {
    // CRC-32/CKSUM's check value 0x765E7680 without its final xor with 0xFFFFFFFF.
    expect(oggCrc32(ascii("123456789"))).toBe(0x89a1897f);
  });

  test("Opus: last granule minus pre-skip, at 48 kHz", async () => {
    const file = concat(...stream(opusHead(312), [48000n, 96000n, 120312n]));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "ogg", durationSeconds: 2.5 });
  });

  test("Vorbis: last granule over the identification header's sample rate", async () => {
    const file = concat(...stream(vorbisId(44100), [44100n, 141120n]));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "ogg", durationSeconds: 3.2 });
  });

  test("FLAC in Ogg: last granule over STREAMINFO's rate", async () => {
    const streamInfo = concat(uintLE(0, 10), Uint8Array.of(0x0b, 0xb8, 0x00, 0xf0), new Uint8Array(20)); // 48 kHz, 16-bit mono
    const head = concat(Uint8Array.of(0x7f), ascii("FLAC"), Uint8Array.of(1, 0, 0, 0), ascii("fLaC"), Uint8Array.of(0x80, 0, 0, 34), streamInfo);
    const file = concat(...stream(head, [24000n]));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "ogg", durationSeconds: 0.5 });
  });

  test("skips a fake 'OggS' inside packet data (bad CRC), a -1 granule and pages of other streams", async () => {
    const pages = stream(opusHead(0), [48000n, 96000n]);
    const noPacketEnds = oggPage({ serial: SERIAL, sequence: 9, granule: -1n, headerType: 0, packet: noise(500) });
    const otherStream = oggPage({ serial: 77, sequence: 0, granule: 480000n, headerType: 0, packet: noise(200) });
    const decoy = concat(ascii("OggS"), Uint8Array.of(0, 4), uintLE(999999, 8), uintLE(SERIAL, 4), new Uint8Array(9), noise(40));
    const lastWithDecoy = oggPage({ serial: SERIAL, sequence: 10, granule: 144000n, headerType: EOS, packet: concat(noise(100), decoy) });
    const file = concat(...pages, noPacketEnds, otherStream, lastWithDecoy, otherStream);
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "ogg", durationSeconds: 3 });
    expect(await probeAudio(bytesFile(concat(...pages, noPacketEnds)))).toMatchObject({ format: "ogg", durationSeconds: 2 });
  });

  test("a file cut mid-page uses the last complete page", async () => {
    const file = concat(...stream(opusHead(0), [48000n, 96000n]));
    expect(await probeAudio(bytesFile(file.subarray(0, file.length - 10)))).toMatchObject({ format: "ogg", durationSeconds: 1 });
  });

  test("with only header pages (no audio page) gives duration 0", async () => {
    const file = concat(...stream(opusHead(0), []));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "ogg", durationSeconds: 0 });
  });

  test("reads the first page and a tail window only, not the whole file", async () => {
    const [head, tags] = stream(opusHead(312), []);
    const last = oggPage({ serial: SERIAL, sequence: 5000, granule: 48000n * 3600n + 312n, headerType: EOS, packet: noise(4000) });
    const size = 400_000_000;
    const file = sparseFile(size, [
      { offset: 0, bytes: concat(head!, tags!) },
      { offset: size - last.length, bytes: last },
    ]);
    expect(await probeAudio(file)).toMatchObject({ format: "ogg", durationSeconds: 3600 });
    expect(file.bytesRead).toBeLessThan(100 * 1024);
  });
});
