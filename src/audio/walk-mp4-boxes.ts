import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";

/** A box of an ISO base media file (MP4, M4A): its four-letter type and where its body lies. */
export interface Mp4Box {
  type: string;
  body: number;
  end: number;
}

// Real files have a handful of boxes per level, or one pair per fragment; this bounds the
// walk on hostile input.
const MAX_BOXES = 100_000;

/**
 * The boxes between `start` and `end`, reading only their headers, so a multi-gigabyte
 * `mdat` before a trailing `moov` costs one 16-byte read. Stops at the first malformed one.
 */
export async function* walkMp4Boxes(file: RandomAccessFile, start: number, end: number): AsyncGenerator<Mp4Box> {
  let offset = start;
  for (let i = 0; i < MAX_BOXES && offset + 8 <= end; i++) {
    const head = await readRange(file, offset, 16);
    const view = viewOf(head);
    let size = view.getUint32(0);
    let headerBytes = 8;
    if (size === 1 && head.length >= 16) {
      size = Number(view.getBigUint64(8));
      headerBytes = 16;
    } else if (size === 0) {
      size = end - offset; // "extends to the end of the file"
    }
    if (size < headerBytes) return;
    yield { type: String.fromCharCode(...head.subarray(4, 8)), body: offset + headerBytes, end: Math.min(end, offset + size) };
    offset += size;
  }
}

/** The first box of `type` between `start` and `end`, or null. */
export async function findMp4Box(file: RandomAccessFile, start: number, end: number, type: string): Promise<Mp4Box | null> {
  for await (const box of walkMp4Boxes(file, start, end)) if (box.type === type) return box;
  return null;
}

/** Finds the box at the end of a path of types, each inside the one before, or null. */
export async function findMp4Path(file: RandomAccessFile, start: number, end: number, path: readonly string[]): Promise<Mp4Box | null> {
  let box: Mp4Box | null = { type: "", body: start, end };
  for (const type of path) {
    box = await findMp4Box(file, box.body, box.end, type);
    if (!box) return null;
  }
  return box;
}

/** Reads a 32- or 64-bit unsigned field; null when out of range or the all-ones "unknown" value. */
export function readMp4Uint(view: DataView, offset: number, wide: boolean): number | null {
  if (offset + (wide ? 8 : 4) > view.byteLength) return null;
  if (!wide) {
    const value = view.getUint32(offset);
    return value === 0xffffffff ? null : value;
  }
  const value = view.getBigUint64(offset);
  return value === 0xffffffffffffffffn ? null : Number(value);
}

/**
 * Timescale and duration from an `mvhd` or `mdhd` body (same layout): version and flags,
 * creation and modification times (32 or 64 bits by version), timescale, duration.
 */
export async function readMp4Header(file: RandomAccessFile, box: Mp4Box): Promise<{ timescale: number; duration: number | null } | null> {
  const body = await readRange(file, box.body, 32);
  const wide = body[0] === 1;
  if (body.length < (wide ? 32 : 20)) return null;
  const view = viewOf(body);
  return { timescale: view.getUint32(wide ? 20 : 12), duration: readMp4Uint(view, wide ? 24 : 16, wide) };
}
