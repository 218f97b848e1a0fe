import { describe, expect, test } from "bun:test";
import { encodeFlac, flacStreamHeader } from "../../src/audio/encode-flac.ts";
import { encodeMp3Silence } from "../../src/audio/encode-mp3-silence.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { ascii, box, concat, mvhd, noise, oggPage, sparseFile, uintBE, uintLE } from "./_fixtures.ts";

const probe = (bytes: Uint8Array) => probeAudio(bytesFile(bytes));
const MP3_FRAME_SECONDS = 1152 / 44100;

/** An ID3v2.4 tag with `size` bytes of body (syncsafe size). */
function id3(size: number): Uint8Array {
  const syncsafe = [(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f];
  return concat(ascii("ID3"), Uint8Array.of(4, 0, 0, ...syncsafe), noise(size, 7).map((b) => b & 0x7f));
}

describe("probeAudio: not audio", () => {
  const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...ascii("IHDR"), ...noise(64));
  test.each([
    ["an empty file", new Uint8Array(0)],
    ["the text hello", ascii("hello")],
    ["a PNG header", png],
    ["1 KB of random bytes", noise(1024)],
    ["0xFFFB then garbage", concat(Uint8Array.of(0xff, 0xfb), noise(1022, 3))],
    ["one valid MP3 frame header then garbage", concat(Uint8Array.of(0xff, 0xfb, 0x90, 0xc0), noise(2000, 5))],
    ["a single MP3 frame", encodeMp3Silence(1).subarray(417, 834)],
    ["an ID3 tag and nothing after it", id3(100)],
    ["a RIFF AVI header", concat(ascii("RIFF"), uintLE(100, 4), ascii("AVI LIST"), noise(92))],
    ["a WAVE file with no data chunk", encodeWav(new Int16Array(10), 8000).subarray(0, 36)],
    ["an MP4 with no moov", concat(box("ftyp", ascii("isom"), uintBE(0, 4)), box("mdat", noise(100)))],
    ["an Ogg page of an unknown codec", concat(ascii("OggS"), new Uint8Array(22), Uint8Array.of(1, 8), ascii("Unknown!"))],
  ])("%s gives null", async (_name, bytes) => {
    expect(await probe(bytes)).toBeNull();
  });

  test("100 different random 4 KB inputs all give null", async () => {
    for (let seed = 1; seed <= 100; seed++) expect(await probe(noise(4096, seed))).toBeNull();
  });
});

describe("probeAudio: WAV", () => {
  const wav = encodeWav(new Int16Array(16000 * 2), 16000);
  const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

  test("a data size left unknown (0xFFFFFFFF or 0) by a streaming writer means the rest of the file", async () => {
    for (const size of [0xffffffff, 0]) {
      const streamed = wav.slice();
      view(streamed).setUint32(4, 0xffffffff, true);
      view(streamed).setUint32(40, size, true);
      expect(await probe(streamed)).toMatchObject({ format: "wav", durationSeconds: 2 });
    }
  });

  test("a data size past the end of a cut-off file counts only the bytes there", async () => {
    expect(await probe(wav.subarray(0, 44 + 16000))).toMatchObject({ format: "wav", durationSeconds: 0.5 });
  });

  test("walks past other chunks, odd-sized ones padded to even", async () => {
    const list = concat(ascii("LIST"), uintLE(5, 4), ascii("INFOx"), Uint8Array.of(0));
    const withList = concat(wav.subarray(0, 36), list, wav.subarray(36));
    expect(await probe(withList)).toMatchObject({ format: "wav", durationSeconds: 2 });
  });

  test("an RF64 header is read like RIFF", async () => {
    const rf64 = wav.slice();
    rf64.set(ascii("RF64"), 0);
    view(rf64).setUint32(40, 0xffffffff, true);
    expect(await probe(rf64)).toMatchObject({ format: "wav", durationSeconds: 2 });
  });

  test("a zero byte rate gives null rather than Infinity", async () => {
    const broken = wav.slice();
    view(broken).setUint32(28, 0, true);
    expect(await probe(broken)).toBeNull();
  });
});

describe("probeAudio: MP3", () => {
  test("skips an ID3v2 tag (and zero padding after it)", async () => {
    const mp3 = encodeMp3Silence(3.2);
    const expected = { format: "mp3" as const, durationSeconds: ((mp3.length / 417 - 1) * 1152) / 44100 };
    expect(await probe(concat(id3(3000), mp3))).toMatchObject(expected);
    expect(await probe(concat(id3(3000), new Uint8Array(500), mp3))).toMatchObject(expected);
  });

  test("without a tag frame, estimates constant bitrate from the size, ignoring an ID3v1 tag", async () => {
    const frames = encodeMp3Silence(3.2).subarray(417); // drop the Info frame
    const seconds = (frames.length / 417) * MP3_FRAME_SECONDS;
    for (const file of [frames, concat(frames, ascii("TAG"), new Uint8Array(125))]) {
      const result = await probe(file);
      expect(result?.format).toBe("mp3");
      expect(Math.abs(result!.durationSeconds - seconds)).toBeLessThan(MP3_FRAME_SECONDS);
    }
  });

  test("reads the frame count of a VBRI header", async () => {
    const mp3 = encodeMp3Silence(1).slice();
    mp3.fill(0, 4, 417);
    mp3.set(concat(ascii("VBRI"), uintBE(1, 2), uintBE(0, 2), uintBE(0, 2), uintBE(mp3.length, 4), uintBE(1000, 4)), 36);
    expect(await probe(mp3)).toMatchObject({ format: "mp3", durationSeconds: (1000 * 1152) / 44100 });
  });

  test("reads MPEG-2 Layer III (576 samples a frame) with a Xing tag after 9 bytes of side info", async () => {
    // MPEG-2, Layer III, no CRC; 64 kbit/s, 22.05 kHz; mono: 72 * 64000 / 22050 = 208 bytes.
    const frame = concat(Uint8Array.of(0xff, 0xf3, 0x80, 0xc0), new Uint8Array(204));
    const xing = frame.slice();
    xing.set(concat(ascii("Xing"), uintBE(1, 4), uintBE(40, 4)), 13);
    const file = concat(xing, ...Array.from({ length: 40 }, () => frame));
    expect(await probe(file)).toMatchObject({ format: "mp3", durationSeconds: (40 * 576) / 22050 });
  });
});

describe("probeAudio: FLAC", () => {
  const samples = new Int16Array(44100 * 3 + 123).map((_, i) => (i * 31) % 2000);
  const seconds = samples.length / 44100;

  test("a total sample count of 0 (unknown, as when written to a pipe) is recovered from the last frame", async () => {
    const flac = encodeFlac(samples, 44100).slice();
    flac[21] = flac[21]! & 0xf0;
    flac.fill(0, 22, 26);
    expect(await probe(flac)).toMatchObject({ format: "flac", durationSeconds: seconds });
    expect(await probe(flac.subarray(0, flac.length - 1))).toBeNull(); // the last frame cut short
  });

  test("is found behind an ID3v2 tag", async () => {
    expect(await probe(concat(id3(200), encodeFlac(samples, 44100)))).toMatchObject({ format: "flac", durationSeconds: seconds });
  });

  test("reads only the header of a large file", async () => {
    const head = encodeFlac(samples, 44100).subarray(0, 42);
    const file = sparseFile(500_000_000, [{ offset: 0, bytes: head }]);
    expect(await probeAudio(file)).toMatchObject({ format: "flac", durationSeconds: seconds });
    expect(file.bytesRead).toBeLessThan(1024);
  });
});

describe("probeAudio: the most seconds a file's bytes can hold", () => {
  test("FLAC: 65,536 samples for every 8 bytes after STREAMINFO; a bare header holds none", async () => {
    const header = flacStreamHeader(50_000_000 * 1000, 1000); // 42 bytes claiming 50M s at 1 kHz
    expect(await probe(header)).toEqual({ format: "flac", durationSeconds: 50_000_000, mostSeconds: 0 });
    const real = encodeFlac(new Int16Array(44100 * 3), 44100);
    const probed = (await probe(real))!;
    expect(probed.mostSeconds).toBe((Math.floor((real.length - 42) / 8) * 65_536) / 44100);
    expect(probed.durationSeconds).toBeLessThan(probed.mostSeconds / 1000);
  });

  test("MP3: a second for every 800 bytes, whatever a Xing or VBRI tag says", async () => {
    const mp3 = encodeMp3Silence(1).slice();
    mp3.fill(0, 4, 417);
    mp3.set(concat(ascii("VBRI"), uintBE(1, 2), uintBE(0, 2), uintBE(0, 2), uintBE(mp3.length, 4), uintBE(1000, 4)), 36);
    expect(await probe(mp3)).toEqual({ format: "mp3", durationSeconds: (1000 * 1152) / 44100, mostSeconds: mp3.length / 800 });
    const real = encodeMp3Silence(61);
    const probed = (await probe(real))!;
    expect(probed.durationSeconds).toBeLessThan(probed.mostSeconds / 10);
  });

  test("WAV: a second for every 100 bytes of data, whatever the byte rate says", async () => {
    const wav = encodeWav(new Int16Array(1000), 8000).slice();
    new DataView(wav.buffer).setUint32(28, 1, true); // 1 byte a second
    expect(await probe(wav)).toEqual({ format: "wav", durationSeconds: 2000, mostSeconds: 20 });
  });

  test("Ogg: the FLAC bound at the stream's own rate", async () => {
    const head = concat(ascii("OpusHead"), Uint8Array.of(1, 1), uintLE(0, 2), uintLE(48000, 4), uintLE(0, 2), Uint8Array.of(0));
    const pages = [oggPage({ serial: 7, sequence: 0, granule: 0n, headerType: 2, packet: head }), oggPage({ serial: 7, sequence: 1, granule: 48_000n * 3600n * 24n, headerType: 4, packet: noise(10) })];
    const file = concat(...pages);
    expect(await probe(file)).toEqual({ format: "ogg", durationSeconds: 86_400, mostSeconds: (Math.floor(file.length / 8) * 65_536) / 48_000 });
  });

  test("m4a and webm have no bound: their timelines may have gaps", async () => {
    const m4a = concat(box("ftyp", ascii("M4A "), uintBE(0, 4), ascii("M4A isom")), box("moov", mvhd(0, 1000, 3_600_000)));
    expect(await probe(m4a)).toEqual({ format: "m4a", durationSeconds: 3600, mostSeconds: Infinity });
  });
});
