const LF = 10;
const CR = 13;

/**
 * Where the head that starts a byte run ends: the index just past its blank line (CRLF CRLF,
 * or LF LF from a lenient server, as RFC 9112 lets a recipient accept), or -1 when the blank
 * line has not arrived. The search starts at `from`; a caller resuming a search gives the
 * length it searched before, less 2, as a line end may have been cut after its LF.
 */
export function findHeadEnd(bytes: Uint8Array, from: number): number {
  for (let lf = bytes.indexOf(LF, from); lf >= 0; lf = bytes.indexOf(LF, lf + 1)) {
    const next = bytes[lf + 1];
    if (next === LF) return lf + 2;
    if (next === CR && lf + 2 < bytes.length) {
      if (bytes[lf + 2] === LF) return lf + 3;
    } else if (next === undefined || next === CR) return -1;
  }
  return -1;
}

/** Bytes gathered across pushes into one buffer that doubles as it fills, so gathering n bytes copies O(n). */
export class GrowableBytes {
  #buffer = new Uint8Array(0);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  append(bytes: Uint8Array): void {
    const needed = this.#length + bytes.length;
    if (needed > this.#buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.#buffer.length * 2, 256));
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
    }
    this.#buffer.set(bytes, this.#length);
    this.#length = needed;
  }

  /** The bytes gathered, as a view valid until the next append or clear. */
  view(): Uint8Array {
    return this.#buffer.subarray(0, this.#length);
  }

  /** Forgets the bytes; a large buffer is let go rather than kept for the next head. */
  clear(): void {
    this.#length = 0;
    if (this.#buffer.length > 16 * 1024) this.#buffer = new Uint8Array(0);
  }
}
