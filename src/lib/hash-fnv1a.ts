const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * A 32-bit unsigned hash of text (as its UTF-8 bytes) or of raw bytes: FNV-1a, finished with
 * murmur3's fmix32. The finisher matters because callers take the low bits modulo small sizes,
 * and plain FNV-1a's low bits depend on few input bits. A string and its UTF-8 bytes hash alike.
 */
export function hashFnv1a(input: string | Uint8Array): number {
  let h = FNV_OFFSET_BASIS;
  const feed = (byte: number): void => {
    h = Math.imul(h ^ byte, FNV_PRIME);
  };
  if (typeof input === "string") feedUtf8(input, feed);
  else for (const byte of input) feed(byte);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Streams text's UTF-8 bytes without allocating, matching TextEncoder (lone surrogates become U+FFFD). */
function feedUtf8(text: string, feed: (byte: number) => void): void {
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = text.charCodeAt(i + 1);
      if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x80) {
      feed(c);
    } else if (c < 0x800) {
      feed(0xc0 | (c >> 6));
      feed(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      feed(0xe0 | (c >> 12));
      feed(0x80 | ((c >> 6) & 0x3f));
      feed(0x80 | (c & 0x3f));
    } else {
      feed(0xf0 | (c >> 18));
      feed(0x80 | ((c >> 12) & 0x3f));
      feed(0x80 | ((c >> 6) & 0x3f));
      feed(0x80 | (c & 0x3f));
    }
  }
}
