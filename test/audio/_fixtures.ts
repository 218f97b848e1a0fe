// Byte builders for the container fixtures the probe tests need: Ogg pages, MP4 boxes and
// EBML elements, laid out by hand from the specs so each test shows what it feeds in.
import { oggCrc32 } from "../../src/audio/probe-ogg.ts";
import type { RandomAccessFile } from "../../src/audio/random-access-file.ts";

/** Concatenates byte arrays. */
export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** ASCII text as bytes. */
export function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** A big-endian unsigned integer of `bytes` bytes. */
export function uintBE(value: number | bigint, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let rest = BigInt(value);
  for (let i = bytes - 1; i >= 0; i--, rest >>= 8n) out[i] = Number(rest & 0xffn);
  return out;
}

/** A little-endian unsigned integer of `bytes` bytes. */
export function uintLE(value: number | bigint, bytes: number): Uint8Array {
  return uintBE(value, bytes).reverse();
}

/** Deterministic pseudo-random bytes (xorshift32), so "random" inputs are the same every run. */
export function noise(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** One Ogg page holding `packet` whole (it must be under 255 * 255 bytes), with its CRC. */
export function oggPage(options: { serial: number; sequence: number; granule: bigint; headerType: number; packet: Uint8Array }): Uint8Array {
  const lacing: number[] = [];
  let left = options.packet.length;
  while (left >= 255) {
    lacing.push(255);
    left -= 255;
  }
  lacing.push(left);
  const header = concat(
    ascii("OggS"),
    Uint8Array.of(0, options.headerType),
    uintLE(BigInt.asUintN(64, options.granule), 8),
    uintLE(options.serial, 4),
    uintLE(options.sequence, 4),
    new Uint8Array(4),
    Uint8Array.of(lacing.length, ...lacing),
  );
  const page = concat(header, options.packet);
  page.set(uintLE(oggCrc32(page), 4), 22);
  return page;
}

/** An MP4 box: 32-bit size, type, then the body. */
export function box(type: string, ...body: readonly Uint8Array[]): Uint8Array {
  const content = concat(...body);
  return concat(uintBE(8 + content.length, 4), ascii(type), content);
}

/** An mvhd body (ISO/IEC 14496-12 8.2.2): version 0 has 32-bit times, version 1 64-bit ones. */
export function mvhd(version: 0 | 1, timescale: number, duration: number | bigint): Uint8Array {
  const times = version === 1 ? uintBE(0, 16) : uintBE(0, 8);
  const rest = new Uint8Array(80); // rate, volume, matrix, pre_defined, next_track_ID
  return box("mvhd", Uint8Array.of(version, 0, 0, 0), times, uintBE(timescale, 4), uintBE(duration, version === 1 ? 8 : 4), rest);
}

/** An EBML element with a 4-byte ID or shorter (given as bytes) and an 8-byte size field. */
export function ebml(id: readonly number[], ...body: readonly Uint8Array[]): Uint8Array {
  const content = concat(...body);
  // Size as an 8-byte vint: marker 0x01 then 7 bytes of value.
  return concat(Uint8Array.from(id), Uint8Array.of(0x01), uintBE(content.length, 7), content);
}

/** An EBML element whose size is "unknown" (all ones), as live recorders write. */
export function ebmlUnknownSize(id: readonly number[], ...body: readonly Uint8Array[]): Uint8Array {
  return concat(Uint8Array.from(id), Uint8Array.of(0xff), ...body);
}

/** A float64 element body. */
export function float64(value: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, value);
  return out;
}

/** A file of `size` bytes built from `pieces` at offsets, zeros elsewhere, never held whole; counts bytes read. */
export function sparseFile(size: number, pieces: ReadonlyArray<{ offset: number; bytes: Uint8Array }>): RandomAccessFile & { bytesRead: number } {
  const file = {
    size,
    bytesRead: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      for (const piece of pieces) {
        for (let i = 0; i < piece.bytes.length; i++) {
          const at = piece.offset + i - offset;
          if (at >= 0 && at < out.length) out[at] = piece.bytes[i]!;
        }
      }
      file.bytesRead += out.length;
      return out;
    },
  };
  return file;
}
