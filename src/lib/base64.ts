/** Standard base64 of bytes, in all three runtimes (btoa works on binary strings). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // Chunked: one String.fromCharCode argument per byte would overflow the stack on large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
