import { hasAscii } from "./ascii-bytes.ts";
import { probeFlac } from "./probe-flac.ts";
import { probeMp3 } from "./probe-mp3.ts";
import { probeMp4 } from "./probe-mp4.ts";
import { probeOgg } from "./probe-ogg.ts";
import { probeWav } from "./probe-wav.ts";
import { probeWebm } from "./probe-webm.ts";
import { readRange, type RandomAccessFile } from "./random-access-file.ts";
import { skipId3v2 } from "./skip-id3v2.ts";

export type { RandomAccessFile } from "./random-access-file.ts";

/** An audio file's container format and length. */
export interface AudioProbe {
  format: "wav" | "mp3" | "flac" | "ogg" | "m4a" | "webm";
  /** Seconds, unrounded. */
  durationSeconds: number;
  /**
   * The most seconds a file of this size can hold in this format; a header that claims more
   * is false. Infinity for formats whose timeline may have gaps (m4a, webm).
   */
  mostSeconds: number;
}

type Format = AudioProbe["format"];

/** A duration as a probe reads it, with the most the file's bytes can hold. */
export interface ProbedDuration {
  seconds: number;
  mostSeconds: number;
}

/** A probe of a format with no bound from its size: MP4 edit lists and Matroska timecodes may leave gaps. */
const unbounded = (probe: (file: RandomAccessFile) => Promise<number | null>) => async (file: RandomAccessFile) => {
  const seconds = await probe(file);
  return seconds === null ? null : { seconds, mostSeconds: Infinity };
};

/** Duration of a file of each format whose data (after any ID3v2 tags) starts at `start`. */
const PROBES: Record<Format, (file: RandomAccessFile, start: number) => Promise<ProbedDuration | null>> = {
  wav: probeWav,
  mp3: probeMp3,
  flac: probeFlac,
  ogg: probeOgg,
  m4a: unbounded(probeMp4),
  webm: unbounded(probeWebm),
};

/** The container a file's first bytes announce; MPEG audio has no magic, so it is never named. */
function sniff(head: Uint8Array): Format | null {
  if ((hasAscii(head, 0, "RIFF") || hasAscii(head, 0, "RF64")) && hasAscii(head, 8, "WAVE")) return "wav";
  if (hasAscii(head, 0, "fLaC")) return "flac";
  if (hasAscii(head, 0, "OggS")) return "ogg";
  if (hasAscii(head, 4, "ftyp")) return "m4a";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "webm";
  return null;
}

/**
 * The format and duration of an audio file, or null when it is not one we recognise or its
 * duration cannot be found. Reads headers and small windows only (a tail window for Ogg and
 * for WebM/FLAC streams of unknown length), never the whole file.
 */
export async function probeAudio(file: RandomAccessFile): Promise<AudioProbe | null> {
  if (file.size < 4) return null;
  let format = sniff(await readRange(file, 0, 12));
  let start = 0;
  if (format === null) {
    // Anything else is tried as MPEG audio after any ID3v2 tags, which some taggers put in
    // front of FLAC too.
    start = await skipId3v2(file);
    format = sniff(await readRange(file, start, 12)) === "flac" ? "flac" : "mp3";
  }
  const probed = await PROBES[format](file, start);
  return probed === null || !Number.isFinite(probed.seconds) ? null : { format, durationSeconds: probed.seconds, mostSeconds: probed.mostSeconds };
}
