/** Uint8Array's own base64 (Bun, Deno, Node 25), where the runtime has it. */
const nativeToBase64 = (Uint8Array.prototype as { toBase64?: (this: Uint8Array) => string }).toBase64;

/** Standard base64 of bytes, in all three runtimes. */
export function bytesToBase64(bytes: Uint8Array): string {
  // The native encoder is about 100 times faster than building a binary string for btoa,
  // which took 90 ms for the 4 MB of a large embeddings answer.
  if (nativeToBase64) return nativeToBase64.call(bytes);
  let binary = "";
  // Chunked: one String.fromCharCode argument per byte would overflow the stack on large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
