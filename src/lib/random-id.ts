const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** `length` characters of base62 from the platform's cryptographic random source. */
export function randomBase62(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
  let out = "";
  // 62 * 4 = 248: bytes at or above it are skipped so every character is equally likely.
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const b = bytes[i]!;
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out.length === length ? out : out + randomBase62(length - out.length);
}

/** A new record ID with a type prefix, e.g. `usr_3kTq9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
