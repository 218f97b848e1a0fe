const CR = 13;

/** What one scan of a chunk found. */
export interface ScanResult {
  /** Bytes now known not to be part of the delimiter, in order (possibly empty slices). */
  data: Uint8Array[];
  /** Where scanning stopped: just past the delimiter, or the chunk's end. */
  next: number;
  found: boolean;
}

/**
 * Finds a delimiter that starts with CR (as every multipart delimiter does) in a stream of
 * chunks, split anywhere, in time linear in the input (Knuth-Morris-Pratt, with a native
 * `indexOf` jump to the next CR). Bytes of a partial match at a chunk's end are held back
 * rather than copied: they equal the delimiter's first bytes, so when the match fails they
 * are passed on from the delimiter itself.
 */
export class DelimiterFinder {
  private readonly fallback: Uint8Array;
  /** How many of the matched bytes came in earlier chunks and were held back. */
  private held: number;

  /** `matched` counts delimiter bytes taken as already seen (the CRLF before a body's first boundary). */
  constructor(
    private readonly needle: Uint8Array,
    private matched = 0,
  ) {
    if (needle[0] !== CR || needle.length > 255) throw new RangeError("The delimiter must start with CR and be short");
    this.fallback = buildFallback(needle);
    this.held = matched;
  }

  /** Scans `chunk` from `start` up to the end of the next delimiter or of the chunk. */
  scan(chunk: Uint8Array, start: number): ScanResult {
    const { needle, fallback } = this;
    const data: Uint8Array[] = [];
    let q = this.matched;
    let i = start;
    while (i < chunk.length) {
      if (q === 0) {
        i = chunk.indexOf(CR, i);
        if (i === -1) break;
      }
      const byte = chunk[i++];
      while (q > 0 && byte !== needle[q]) {
        const kept = fallback[q - 1]!;
        const fromHeld = Math.min(q - kept, this.held);
        if (fromHeld > 0) data.push(needle.slice(0, fromHeld));
        this.held -= fromHeld;
        q = kept;
      }
      if (byte === needle[q]) q++;
      if (q === needle.length) {
        data.push(chunk.subarray(start, i - (q - this.held)));
        this.matched = this.held = 0;
        return { data, next: i, found: true };
      }
    }
    data.push(chunk.subarray(start, chunk.length - (q - this.held)));
    this.matched = this.held = q;
    return { data, next: chunk.length, found: false };
  }
}

/** KMP failure table: for each prefix length - 1, the longest proper prefix that is also its suffix. */
function buildFallback(needle: Uint8Array): Uint8Array {
  const table = new Uint8Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = table[k - 1]!;
    if (needle[i] === needle[k]) k++;
    table[i] = k;
  }
  return table;
}
