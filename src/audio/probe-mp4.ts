import { readRange, viewOf, type RandomAccessFile } from "./random-access-file.ts";
import { probeMp4Fragments } from "./probe-mp4-fragments.ts";
import { findMp4Box, findMp4Path, readMp4Header, readMp4Uint } from "./walk-mp4-boxes.ts";

/** The fragment duration of `moov/mvex/mehd`, in movie timescale units, or null. */
async function readFragmentDuration(file: RandomAccessFile, moovBody: number, moovEnd: number): Promise<number | null> {
  const mehd = await findMp4Path(file, moovBody, moovEnd, ["mvex", "mehd"]);
  if (!mehd) return null;
  const body = await readRange(file, mehd.body, 12);
  return readMp4Uint(viewOf(body), 4, body[0] === 1);
}

/**
 * The duration of an ISO base media file (MP4, M4A, 3GP) from `moov/mvhd`: duration over
 * timescale, in version 0 (32-bit) or 1 (64-bit) layout. A fragmented file (as Safari's
 * MediaRecorder writes) has duration 0 there: `mvex/mehd` gives it then, or failing that
 * the last movie fragment.
 */
export async function probeMp4(file: RandomAccessFile): Promise<number | null> {
  const moov = await findMp4Box(file, 0, file.size, "moov");
  const mvhd = moov && (await findMp4Box(file, moov.body, moov.end, "mvhd"));
  const header = mvhd && (await readMp4Header(file, mvhd));
  if (!moov || !header || header.timescale === 0) return null;
  if (header.duration !== null && header.duration > 0) return header.duration / header.timescale;
  const fragmentDuration = await readFragmentDuration(file, moov.body, moov.end);
  if (fragmentDuration) return fragmentDuration / header.timescale;
  return probeMp4Fragments(file, moov);
}
