import { hasAscii } from "./ascii-bytes.ts";
import type { ProbedDuration } from "./probe-audio.ts";
import { mostFlacSamples } from "./flac-frame-header.ts";
import { readStreamInfo } from "./probe-flac.ts";
import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";

// The largest possible page (27 + 255 + 255 * 255 bytes) fits, so the last complete page does.
const TAIL_BYTES = 66 * 1024;
const PAGE_HEADER_BYTES = 27;

/** How the first stream's granule positions turn into seconds. */
interface OggClock {
  serial: number;
  sampleRate: number;
  /** Samples at the start that are decoded but not played (Opus pre-skip). */
  preSkip: number;
}

/** The CRC of each byte value shifted in alone, so a page is one table look-up a byte, not eight steps. */
const OGG_CRC_TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 24;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  return crc >>> 0;
});

/** The CRC-32 of Ogg pages: polynomial 0x04C11DB7, initial value 0, no reflection, no final xor. */
export function oggCrc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = (crc << 8) ^ OGG_CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!;
  return crc >>> 0;
}

/** Reads the codec of the first page's first packet: Opus, Vorbis, FLAC or Speex. */
function readClock(page: Uint8Array): OggClock | null {
  if (!hasAscii(page, 0, "OggS") || page[4] !== 0 || page.length < PAGE_HEADER_BYTES) return null;
  const view = viewOf(page);
  const serial = view.getUint32(14, true);
  const packet = PAGE_HEADER_BYTES + page[26]!;
  const at = (offset: number) => (packet + offset + 4 <= page.length ? view.getUint32(packet + offset, true) : 0);
  if (hasAscii(page, packet, "OpusHead")) {
    // Opus always runs at 48 kHz; the header's "input sample rate" is informational only.
    return { serial, sampleRate: 48000, preSkip: packet + 12 <= page.length ? view.getUint16(packet + 10, true) : 0 };
  }
  if (page[packet] === 1 && hasAscii(page, packet + 1, "vorbis")) return { serial, sampleRate: at(12), preSkip: 0 };
  if (page[packet] === 0x7f && hasAscii(page, packet + 1, "FLAC") && hasAscii(page, packet + 9, "fLaC")) {
    const info = readStreamInfo(page.subarray(packet + 17));
    return info && { serial, sampleRate: info.sampleRate, preSkip: 0 };
  }
  if (hasAscii(page, packet, "Speex   ")) return { serial, sampleRate: at(36), preSkip: 0 };
  return null;
}

/** See lastGranule: four pages of the largest size Ogg allows (its CRC goes bit by bit). */
const CRC_BUDGET_BYTES = 256 * 1024;

/**
 * The granule position of the last complete, CRC-valid page of stream `serial` in `tail`,
 * or null. Checking the CRC rules out "OggS" appearing inside packet data.
 */
function lastGranule(tail: Uint8Array, serial: number): number | null {
  const view = viewOf(tail);
  // Bytes CRC'd, all candidate pages together: the last page is among the first found from
  // the end, and a tail crafted of page headers made the search quadratic.
  let budget = CRC_BUDGET_BYTES;
  for (let at = tail.length - PAGE_HEADER_BYTES; at >= 0; at--) {
    if (tail[at] !== 0x4f || !hasAscii(tail, at, "OggS") || tail[at + 4] !== 0) continue;
    const segments = tail[at + 26]!;
    let end = at + PAGE_HEADER_BYTES + segments;
    if (end > tail.length) continue;
    for (let i = 0; i < segments; i++) end += tail[at + PAGE_HEADER_BYTES + i]!;
    if (end > tail.length || view.getUint32(at + 14, true) !== serial) continue;
    budget -= end - at;
    if (budget < 0) return null;
    const stored = view.getUint32(at + 22, true);
    const page = tail.slice(at, end);
    page.fill(0, 22, 26);
    if (oggCrc32(page) !== stored) continue;
    const granule = view.getBigInt64(at + 6, true);
    // -1 marks a page on which no packet ends; an earlier page then holds the position.
    if (granule >= 0n) return Number(granule);
  }
  return null;
}

/**
 * The duration of an Ogg file from its first stream's codec header and last granule position.
 * Granule positions count samples with no gaps (RFC 7845 fills a gap with packets), and no
 * codec Ogg carries packs more samples into a byte than FLAC's smallest frame: the bound of
 * `mostFlacSamples` holds for all of them.
 */
export async function probeOgg(file: RandomAccessFile): Promise<ProbedDuration | null> {
  const clock = readClock(await readRange(file, 0, PAGE_HEADER_BYTES + 255 + 64));
  if (!clock || clock.sampleRate <= 0) return null;
  const granule = lastGranule(await readRange(file, file.size - TAIL_BYTES, TAIL_BYTES), clock.serial);
  if (granule === null) return null;
  return { seconds: Math.max(0, granule - clock.preSkip) / clock.sampleRate, mostSeconds: mostFlacSamples(file.size) / clock.sampleRate };
}
