// EBML, the binary layout of Matroska and WebM (RFC 8794): elements are an ID and a size, both
// variable-length integers, then the body.

/** An element header: its ID, body size (null when "unknown"), and where its body starts. */
export interface EbmlHeader {
  id: number;
  size: number | null;
  body: number;
}

/** Reads a variable-length integer; `marker` keeps the length marker bit, as IDs are written. */
export function readEbmlVint(bytes: Uint8Array, offset: number, marker: boolean): { value: number; length: number; allOnes: boolean } | null {
  const first = bytes[offset];
  if (first === undefined || first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (offset + length > bytes.length) return null;
  let value = marker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const next = bytes[offset + i]!;
    value = value * 256 + next;
    allOnes &&= next === 0xff;
  }
  return { value, length, allOnes };
}

/** Reads the element header at `offset`, or null when it is malformed or cut off. */
export function readEbmlHeader(bytes: Uint8Array, offset: number): EbmlHeader | null {
  const id = readEbmlVint(bytes, offset, true);
  if (!id || id.length > 4) return null;
  const size = readEbmlVint(bytes, offset + id.length, false);
  if (!size) return null;
  return { id: id.value, size: size.allOnes ? null : size.value, body: offset + id.length + size.length };
}

/** An unsigned integer element body (big-endian, 0 to 8 bytes). */
export function readEbmlUint(bytes: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + (bytes[offset + i] ?? 0);
  return value;
}

/** A float element body: 0, 4 or 8 bytes; null for any other size. */
export function readEbmlFloat(bytes: Uint8Array, offset: number, size: number): number | null {
  if (size === 0) return 0;
  if (offset + size > bytes.length || (size !== 4 && size !== 8)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, size);
  return size === 4 ? view.getFloat32(0) : view.getFloat64(0);
}
