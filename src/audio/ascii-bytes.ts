/** True when `bytes` holds the ASCII text `tag` at `offset` (the four-letter codes of RIFF, MP4, Ogg). */
export function hasAscii(bytes: Uint8Array, offset: number, tag: string): boolean {
  if (offset < 0 || offset + tag.length > bytes.length) return false;
  for (let i = 0; i < tag.length; i++) {
    if (bytes[offset + i] !== tag.charCodeAt(i)) return false;
  }
  return true;
}

/** Writes the ASCII text `tag` into `bytes` at `offset`. */
export function writeAscii(bytes: Uint8Array, offset: number, tag: string): void {
  for (let i = 0; i < tag.length; i++) bytes[offset + i] = tag.charCodeAt(i);
}
