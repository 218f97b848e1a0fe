import { expect, test } from "bun:test";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { flacCrc8 } from "../../src/audio/flac-frame-header.ts";
import { ascii, concat, ebml, oggPage, uintBE } from "./_fixtures.ts";

/**
 * Files whose duration is searched for in their tail, crafted so that every position of the
 * tail looks like the start of the last frame, page or cluster. The search is bounded in all
 * (a budget of bytes or elements), so each is refused as unreadable without holding the event
 * loop: the WebM one held it for 25 s per 256 KiB, before the bound, well past this test's
 * time limit; the FLAC and Ogg ones for about a second.
 */

const probe = (bytes: Uint8Array) => probeAudio(bytesFile(bytes));

/** A tail of `period` repeated to about `bytes`. */
const repeated = (period: Uint8Array, bytes: number) => concat(...Array.from({ length: Math.floor(bytes / period.length) }, () => period));

test("a WebM of unknown duration whose tail is cluster IDs inside void elements, over and over", async () => {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], ebml([0x42, 0x82], ascii("webm")));
  const segment = Uint8Array.of(0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
  // A Void element (0xEC) of 5 bytes whose body reads as a Cluster of unknown size.
  const period = Uint8Array.of(0xec, 0x85, 0x1f, 0x43, 0xb6, 0x75, 0xff);
  const file = concat(header, segment, Uint8Array.of(0x1f, 0x43, 0xb6, 0x75, 0xff), repeated(period, 256 * 1024));
  expect(await probe(file)).toBeNull();
});

test("a FLAC of unknown length whose tail is one valid frame header over and over, no frame ending at the file's end", async () => {
  const streamInfo = new Uint8Array(34);
  streamInfo.set(uintBE(4096, 2), 0);
  streamInfo.set(uintBE(4096, 2), 2);
  // 44.1 kHz, mono, 16 bits, 0 samples (unknown).
  streamInfo.set(uintBE((44100n << 44n) | (15n << 36n), 8), 10);
  const frameHeader = Uint8Array.of(0xff, 0xf8, 0x19, 0x08, 0x00);
  const file = concat(ascii("fLaC"), Uint8Array.of(0x80, 0, 0, 34), streamInfo, repeated(concat(frameHeader, Uint8Array.of(flacCrc8(frameHeader))), 64 * 1024), Uint8Array.of(0x12, 0x34));
  expect(await probe(file)).toBeNull();
});

test("an Ogg Opus file whose tail is page headers of the stream over and over, none whole", async () => {
  const opusHead = concat(ascii("OpusHead"), Uint8Array.of(1, 1), Uint8Array.of(0x38, 0x01), Uint8Array.of(0x80, 0xbb, 0, 0), Uint8Array.of(0, 0, 0));
  const first = oggPage({ serial: 0xffffffff, sequence: 0, granule: 0n, headerType: 2, packet: opusHead });
  const period = concat(ascii("OggS"), Uint8Array.of(0), new Uint8Array(27).fill(0xff));
  expect(await probe(concat(first, repeated(period, 66 * 1024)))).toBeNull();
});
