import { describe, expect, test } from "bun:test";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { ascii, box, concat, mvhd, noise, sparseFile, uintBE } from "./_fixtures.ts";

const ftyp = box("ftyp", ascii("M4A "), uintBE(0, 4), ascii("M4A isom"));

/** A trak with a tkhd (track 1) and mdia/mdhd with the given timescale. */
function trak(timescale: number): Uint8Array {
  const tkhd = box("tkhd", Uint8Array.of(0, 0, 0, 3), uintBE(0, 8), uintBE(1, 4), new Uint8Array(68));
  const mdhd = box("mdhd", Uint8Array.of(0, 0, 0, 0), uintBE(0, 8), uintBE(timescale, 4), uintBE(0, 4), new Uint8Array(4));
  return box("trak", tkhd, box("mdia", mdhd));
}

/** A movie fragment for track 1 starting at `decodeTime`, with per-sample durations. */
function moof(decodeTime: number, durations: readonly number[]): Uint8Array {
  const tfhd = box("tfhd", Uint8Array.of(0, 0x02, 0, 0), uintBE(1, 4)); // default-base-is-moof, no optional fields
  const tfdt = box("tfdt", Uint8Array.of(1, 0, 0, 0), uintBE(decodeTime, 8));
  // Flags: data offset present (0x1), sample duration (0x100) and size (0x200) present.
  const samples = durations.flatMap((d) => [...uintBE(d, 4), ...uintBE(100, 4)]);
  const trun = box("trun", Uint8Array.of(0, 0, 0x03, 0x01), uintBE(durations.length, 4), uintBE(0, 4), Uint8Array.from(samples));
  return box("moof", box("mfhd", uintBE(0, 4), uintBE(1, 4)), box("traf", tfhd, tfdt, trun));
}

describe("probeAudio: MP4/M4A", () => {
  test("mvhd version 0: duration over timescale", async () => {
    const file = concat(ftyp, box("moov", mvhd(0, 44100, 141120)), box("mdat", noise(500)));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "m4a", durationSeconds: 3.2 });
  });

  test("mvhd version 1: 64-bit duration", async () => {
    const duration = 2n ** 33n; // beyond 32 bits
    const file = concat(ftyp, box("moov", mvhd(1, 48000, duration)));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "m4a", durationSeconds: Number(duration) / 48000 });
  });

  test("mvhd is found after other moov children", async () => {
    const file = concat(ftyp, box("moov", box("udta", noise(50)), mvhd(0, 1000, 61000)));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "m4a", durationSeconds: 61 });
  });

  test("moov at the end, after a large mdat (64-bit size), read by box headers only", async () => {
    const mdatSize = 5_000_000_000; // over 4 GiB: needs the 64-bit "largesize" form
    const mdatHeader = concat(uintBE(1, 4), ascii("mdat"), uintBE(mdatSize, 8));
    const moov = box("moov", mvhd(0, 44100, 44100 * 3600));
    const file = sparseFile(ftyp.length + mdatSize + moov.length, [
      { offset: 0, bytes: concat(ftyp, mdatHeader) },
      { offset: ftyp.length + mdatSize, bytes: moov },
    ]);
    expect(await probeAudio(file)).toMatchObject({ format: "m4a", durationSeconds: 3600 });
    expect(file.bytesRead).toBeLessThan(1024);
  });

  test("an unknown duration (all ones) gives null", async () => {
    const file = concat(ftyp, box("moov", mvhd(0, 44100, 0xffffffff)));
    expect(await probeAudio(bytesFile(file))).toBeNull();
  });

  test("fragmented, with mvex/mehd: the fragment duration", async () => {
    const mehd = box("mehd", Uint8Array.of(0, 0, 0, 0), uintBE(2500, 4));
    const file = concat(ftyp, box("moov", mvhd(0, 1000, 0), box("mvex", mehd)), moof(0, [1024]));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "m4a", durationSeconds: 2.5 });
  });

  test("fragmented, without mehd (as Safari's MediaRecorder writes): end of the last fragment", async () => {
    const trex = box("trex", Uint8Array.of(0, 0, 0, 0), uintBE(1, 4), uintBE(1, 4), uintBE(1024, 4), uintBE(0, 8));
    const moov = box("moov", mvhd(0, 1000, 0), trak(48000), box("mvex", trex));
    const fragments = [moof(0, [1024, 1024]), box("mdat", noise(200)), moof(2048, [1024, 1024, 512]), box("mdat", noise(300))];
    expect(await probeAudio(bytesFile(concat(ftyp, moov, ...fragments)))).toMatchObject({ format: "m4a", durationSeconds: 4608 / 48000 });
  });

  test("a malformed box size gives null", async () => {
    const file = concat(ftyp, uintBE(4, 4), ascii("moov"));
    expect(await probeAudio(bytesFile(file))).toBeNull();
  });
});

describe("probeAudio: crafted fragmented MP4", () => {
  test("100,000 empty fragments are walked in a few dozen reads, not one per box, and refused", async () => {
    const emptyMoof = box("moof", box("free"));
    const moov = box("moov", mvhd(0, 1000, 0), trak(1000));
    const bytes = concat(ftyp, moov, ...Array.from({ length: 100_000 }, () => emptyMoof));
    let reads = 0;
    const inMemory = bytesFile(bytes);
    const counted = { size: inMemory.size, read: (offset: number, length: number) => (reads++, inMemory.read(offset, length)) };
    expect(await probeAudio(counted)).toBeNull();
    // 1.6 MB in windows of 256 KiB, plus the header and the 64 last fragments tried: before, 100,000 reads and more.
    expect(reads).toBeLessThan(250);
  });
});
