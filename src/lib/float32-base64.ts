import { bytesToBase64 } from "./base64.ts";

/**
 * Vectors as OpenAI's `encoding_format: "base64"` carries them: the little-endian float32
 * bytes, base64-encoded. The official SDKs decode exactly this by default.
 */

/** Base64 of the vector's little-endian float32 bytes. */
export function encodeFloat32Base64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytesToBase64(bytes);
}

/** The vector in base64 little-endian float32 bytes; throws when the bytes are not whole float32s. */
export function decodeFloat32Base64(text: string): number[] {
  const binary = atob(text);
  if (binary.length % 4 !== 0) throw new RangeError("base64 vector is not a whole number of float32 values");
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < view.byteLength; i++) view.setUint8(i, binary.charCodeAt(i));
  const vector = new Array<number>(view.byteLength / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}
