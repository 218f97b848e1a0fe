import { bytesFile, readRange, viewOf, windowedFile, type RandomAccessFile } from "./random-access-file.ts";
import { findMp4Box, findMp4Path, readMp4Header, readMp4Uint, walkMp4Boxes, type Mp4Box } from "./walk-mp4-boxes.ts";

// A movie fragment box holds sample tables only: a few KiB for seconds of audio.
const MAX_MOOF_BYTES = 1024 * 1024;
// The last fragment carries the first track in an audio file; one with video interleaves a
// few fragments of other tracks. Past this many, from the end, the file is not read.
const MAX_MOOFS_TRIED = 64;

/** The first track: its ID, media timescale, and default sample duration from `mvex/trex`. */
async function readFirstTrack(file: RandomAccessFile, moov: Mp4Box): Promise<{ id: number; timescale: number; defaultDuration: number } | null> {
  const trak = await findMp4Box(file, moov.body, moov.end, "trak");
  const tkhd = trak && (await findMp4Box(file, trak.body, trak.end, "tkhd"));
  const mdhd = trak && (await findMp4Path(file, trak.body, trak.end, ["mdia", "mdhd"]));
  const media = mdhd && (await readMp4Header(file, mdhd));
  if (!tkhd || !media || media.timescale === 0) return null;
  const head = await readRange(file, tkhd.body, 24);
  if (head.length < 24) return null;
  // tkhd: version and flags, creation and modification times (32 or 64 bits), track ID.
  const id = viewOf(head).getUint32(head[0] === 1 ? 20 : 12);
  let defaultDuration = 0;
  const mvex = await findMp4Box(file, moov.body, moov.end, "mvex");
  for await (const trex of mvex ? walkMp4Boxes(file, mvex.body, mvex.end) : []) {
    const body = await readRange(file, trex.body, 16);
    if (trex.type === "trex" && body.length === 16 && viewOf(body).getUint32(4) === id) defaultDuration = viewOf(body).getUint32(12);
  }
  return { id, timescale: media.timescale, defaultDuration };
}

/**
 * Where track `trackId`'s samples in a movie fragment end, in media timescale units: the
 * `tfdt` decode time plus the sample durations of its `trun` boxes. Null when the fragment
 * has no such track or no `tfdt` (then the time is only known by adding up every fragment).
 */
async function fragmentEnd(moof: Uint8Array, trackId: number, trexDuration: number): Promise<number | null> {
  const file = bytesFile(moof);
  for await (const traf of walkMp4Boxes(file, 0, moof.length)) {
    if (traf.type !== "traf") continue;
    let start: number | null = null;
    let defaultDuration = trexDuration;
    let total = 0;
    for await (const box of walkMp4Boxes(file, traf.body, traf.end)) {
      const view = viewOf(moof.subarray(box.body, box.end));
      if (view.byteLength < 8) return null;
      const flags = view.getUint32(0) & 0xffffff;
      if (box.type === "tfhd") {
        if (view.getUint32(4) !== trackId) break;
        // Optional fields in order: base data offset (8 bytes), sample description index (4).
        const at = 8 + (flags & 0x1 ? 8 : 0) + (flags & 0x2 ? 4 : 0);
        if (flags & 0x8 && at + 4 <= view.byteLength) defaultDuration = view.getUint32(at);
      } else if (box.type === "tfdt") {
        start = readMp4Uint(view, 4, view.getUint8(0) === 1);
      } else if (box.type === "trun") {
        const count = view.getUint32(4);
        if (!(flags & 0x100)) {
          total += count * defaultDuration;
          continue;
        }
        // Per sample: duration, size, flags, composition offset, each 4 bytes when present.
        const stride = 4 * [0x100, 0x200, 0x400, 0x800].filter((bit) => flags & bit).length;
        let at = 8 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
        for (let i = 0; i < count && at + 4 <= view.byteLength; i++, at += stride) total += view.getUint32(at);
      }
    }
    if (start !== null) return start + total;
  }
  return null;
}

/**
 * The duration of a fragmented MP4 whose `moov` has none: the end of the first track in the
 * last movie fragment that carries it, over that track's timescale.
 */
export async function probeMp4Fragments(file: RandomAccessFile, moov: Mp4Box): Promise<number | null> {
  const track = await readFirstTrack(file, moov);
  if (!track) return null;
  const moofs: Mp4Box[] = [];
  // Every top-level box of the file, in order: read in windows, so a file of many tiny boxes
  // costs a read per window rather than one per box.
  for await (const box of walkMp4Boxes(windowedFile(file), 0, file.size)) if (box.type === "moof") moofs.push(box);
  for (let i = moofs.length - 1; i >= Math.max(0, moofs.length - MAX_MOOFS_TRIED); i--) {
    const moof = moofs[i]!;
    if (moof.end - moof.body > MAX_MOOF_BYTES) continue;
    const end = await fragmentEnd(await readRange(file, moof.body, moof.end - moof.body), track.id, track.defaultDuration);
    if (end !== null) return end / track.timescale;
  }
  return null;
}
