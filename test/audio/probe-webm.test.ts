import { describe, expect, test } from "bun:test";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";
import { ascii, concat, ebml, ebmlUnknownSize, float64, noise, sparseFile, uintBE } from "./_fixtures.ts";

// Element IDs from the Matroska specification (RFC 9559).
const EBML = [0x1a, 0x45, 0xdf, 0xa3];
const DOC_TYPE = [0x42, 0x82];
const SEGMENT = [0x18, 0x53, 0x80, 0x67];
const SEEK_HEAD = [0x11, 0x4d, 0x9b, 0x74];
const INFO = [0x15, 0x49, 0xa9, 0x66];
const TIMESTAMP_SCALE = [0x2a, 0xd7, 0xb1];
const DURATION = [0x44, 0x89];
const TRACKS = [0x16, 0x54, 0xae, 0x6b];
const CLUSTER = [0x1f, 0x43, 0xb6, 0x75];
const TIMESTAMP = [0xe7];
const SIMPLE_BLOCK = [0xa3];
const BLOCK_GROUP = [0xa0];
const BLOCK = [0xa1];
const CUES = [0x1c, 0x53, 0xbb, 0x6b];

const header = (docType = "webm") => ebml(EBML, ebml(DOC_TYPE, ascii(docType)));

/** A block body: track 1, a signed 16-bit time relative to the cluster, flags, data. */
const block = (relative: number) => concat(Uint8Array.of(0x81), uintBE(relative & 0xffff, 2), Uint8Array.of(0x80), noise(60, relative + 100));

/** A cluster at `timestamp` with simple blocks at the relative times given. */
function cluster(timestamp: number, relatives: readonly number[], unknownSize = false): Uint8Array {
  const children = [ebml(TIMESTAMP, uintBE(timestamp, 4)), ...relatives.map((r) => ebml(SIMPLE_BLOCK, block(r)))];
  return unknownSize ? ebmlUnknownSize(CLUSTER, ...children) : ebml(CLUSTER, ...children);
}

describe("probeAudio: WebM/Matroska", () => {
  test("Info Duration times TimestampScale", async () => {
    const info = ebml(INFO, ebml(TIMESTAMP_SCALE, uintBE(1_000_000, 3)), ebml(DURATION, float64(3200)));
    const file = concat(header(), ebml(SEGMENT, ebml(SEEK_HEAD, noise(30)), info, ebml(TRACKS, noise(40)), cluster(0, [0, 20])));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "webm", durationSeconds: 3.2 });
  });

  test("a non-default TimestampScale and a 4-byte float duration; matroska DocType too", async () => {
    const duration = new Uint8Array(4);
    new DataView(duration.buffer).setFloat32(0, 250);
    const info = ebml(INFO, ebml(TIMESTAMP_SCALE, uintBE(10_000_000, 3)), ebml(DURATION, duration));
    const file = concat(header("matroska"), ebml(SEGMENT, info));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "webm", durationSeconds: 2.5 });
  });

  test("no Duration (a live MediaRecorder file): the last block's time in the tail", async () => {
    const info = ebml(INFO, ebml(TIMESTAMP_SCALE, uintBE(1_000_000, 3)));
    const clusters = [cluster(0, [0, 20, 40], true), cluster(60, [0, 20, 40, 60], true)];
    const file = concat(header(), ebmlUnknownSize(SEGMENT, info, ebml(TRACKS, noise(40)), ...clusters));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "webm", durationSeconds: 0.12 });
  });

  test("no Duration: reads a BlockGroup's Block and stops at the Cues after the last cluster", async () => {
    const last = ebml(CLUSTER, ebml(TIMESTAMP, uintBE(1000, 2)), ebml(SIMPLE_BLOCK, block(0)), ebml(BLOCK_GROUP, ebml(BLOCK, block(500))));
    const file = concat(header(), ebml(SEGMENT, ebml(INFO), cluster(0, [0]), last, ebml(CUES, noise(30))));
    expect(await probeAudio(bytesFile(file))).toMatchObject({ format: "webm", durationSeconds: 1.5 });
  });

  test("no Duration and no cluster gives null, not 0", async () => {
    const file = concat(header(), ebml(SEGMENT, ebml(INFO, ebml(TIMESTAMP_SCALE, uintBE(1_000_000, 3)))));
    expect(await probeAudio(bytesFile(file))).toBeNull();
  });

  test("another DocType, or a missing Segment, gives null", async () => {
    const info = ebml(INFO, ebml(DURATION, float64(1000)));
    expect(await probeAudio(bytesFile(concat(header("notwebm"), ebml(SEGMENT, info))))).toBeNull();
    expect(await probeAudio(bytesFile(concat(header(), info)))).toBeNull();
  });

  test("a live recording of an hour reads the head and a tail window only", async () => {
    const head = concat(header(), ebmlUnknownSize(SEGMENT, ebml(INFO)), cluster(0, [0], true));
    const tail = cluster(3_599_000, [0, 980, 1000], true);
    const size = 200_000_000;
    const file = sparseFile(size, [
      { offset: 0, bytes: head },
      { offset: size - tail.length, bytes: tail },
    ]);
    expect(await probeAudio(file)).toMatchObject({ format: "webm", durationSeconds: 3600 });
    expect(file.bytesRead).toBeLessThan(1.2 * 1024 * 1024);
  });
});
