import { writeAscii } from "./ascii-bytes.ts";
import { oggCrc32 } from "./probe-ogg.ts";
import { concatBytes } from "../lib/concat-bytes.ts";

/** Opus counts time in 48 kHz samples, whatever the input rate; one 20 ms frame is 960. */
const OPUS_RATE = 48_000;
const FRAME_SAMPLES = 960;
/**
 * One 20 ms CELT frame that decoders play as silence (TOC 0xF8: fullband, 20 ms, mono, one
 * frame); the packet voice chat services send for quiet.
 */
const SILENT_PACKET = Uint8Array.of(0xf8, 0xff, 0xfe);
/** Samples an Opus decoder drops from the start; encoders use 312 (6.5 ms). */
const PRE_SKIP = 312;
/** Ogg's most segments on a page: that many 3-byte packets each. */
const PACKETS_PER_PAGE = 255;
const SERIAL = 0x6f707573; // "opus"
const VENDOR = "model-gateway mock voice";

const BEGIN_OF_STREAM = 0x02;
const END_OF_STREAM = 0x04;

/** One Ogg page holding whole `packets` (each under 255 bytes), its CRC filled in. */
function oggPage(packets: readonly Uint8Array[], flags: number, granule: number, sequence: number): Uint8Array {
  const bodyBytes = packets.reduce((sum, packet) => sum + packet.length, 0);
  const page = new Uint8Array(27 + packets.length + bodyBytes);
  const view = new DataView(page.buffer);
  writeAscii(page, 0, "OggS");
  page[5] = flags;
  view.setBigUint64(6, BigInt(granule), true);
  view.setUint32(14, SERIAL, true);
  view.setUint32(18, sequence, true);
  page[26] = packets.length;
  let at = 27;
  for (const packet of packets) page[at++] = packet.length;
  for (const packet of packets) {
    page.set(packet, at);
    at += packet.length;
  }
  view.setUint32(22, oggCrc32(page), true);
  return page;
}

/** The identification header (RFC 7845 section 5.1): mono, no gain, mapping family 0. */
function opusHead(inputRate: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  writeAscii(head, 0, "OpusHead");
  head[8] = 1; // version
  head[9] = 1; // channels
  view.setUint16(10, PRE_SKIP, true);
  view.setUint32(12, inputRate, true);
  return head;
}

/** The comment header (RFC 7845 section 5.2): the vendor and no comments. */
function opusTags(): Uint8Array {
  const tags = new Uint8Array(8 + 4 + VENDOR.length + 4);
  writeAscii(tags, 0, "OpusTags");
  new DataView(tags.buffer).setUint32(8, VENDOR.length, true);
  writeAscii(tags, 12, VENDOR);
  return tags;
}

/**
 * An Ogg Opus file of silence lasting `durationSeconds` (at least one 20 ms frame; the last
 * page's granule trims it to the exact length), as OpenAI's `opus` speech format is. No Opus
 * encoder ships in the gateway: the mock voice's Opus is silence, like its MP3.
 */
export function encodeOpusSilence(durationSeconds: number, inputRate: number): Uint8Array {
  if (!(durationSeconds >= 0) || !Number.isFinite(durationSeconds)) throw new RangeError(`invalid duration ${durationSeconds}`);
  const samples = Math.max(1, Math.round(durationSeconds * OPUS_RATE));
  const frames = Math.ceil(samples / FRAME_SAMPLES);
  const pages = [oggPage([opusHead(inputRate)], BEGIN_OF_STREAM, 0, 0), oggPage([opusTags()], 0, 0, 1)];
  for (let done = 0; done < frames; ) {
    const count = Math.min(PACKETS_PER_PAGE, frames - done);
    done += count;
    const last = done === frames;
    const granule = PRE_SKIP + (last ? samples : done * FRAME_SAMPLES);
    pages.push(oggPage(Array.from({ length: count }, () => SILENT_PACKET), last ? END_OF_STREAM : 0, granule, pages.length));
  }
  return concatBytes(pages);
}
