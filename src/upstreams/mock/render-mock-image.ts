import { concatBytes } from "../../lib/concat-bytes.ts";
import { hashFnv1a } from "../../lib/hash-fnv1a.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** CRC-32 (IEEE, reflected 0xEDB88320) as PNG chunks carry it. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** One PNG chunk: length, type, data, CRC of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** zlib-wrapped deflate, which is what PNG's IDAT holds ("deflate" in Compression Streams). */
async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * A deterministic PNG for the mock image model: a diagonal gradient between two colours
 * drawn from the prompt (and the image's index), at the requested size. Truecolour, 8 bits.
 */
export async function renderMockImage(prompt: string, index: number, width: number, height: number): Promise<Uint8Array> {
  const seed = hashFnv1a(`${index}:${prompt}`);
  const from = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff];
  const to = [255 - from[0]!, (seed >>> 24) & 0xff, 255 - from[2]!];
  // A pixel's colour depends on x + y only, so every row is a window onto one diagonal line
  // of colours: copying windows keeps a 2048x2048 image to a few milliseconds.
  const span = Math.max(1, width + height - 2);
  const diagonal = new Uint8Array((width + height - 1) * 3);
  for (let d = 0; d < width + height - 1; d++) {
    for (let c = 0; c < 3; c++) diagonal[d * 3 + c] = Math.round(from[c]! + (to[c]! - from[c]!) * (d / span));
  }
  const rowBytes = 1 + width * 3;
  const raw = new Uint8Array(rowBytes * height);
  // Each row starts with filter byte 0 (None), which the zeroed array already holds.
  for (let y = 0; y < height; y++) raw.set(diagonal.subarray(y * 3, (y + width) * 3), y * rowBytes + 1);
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, adaptive filter, no interlace
  return concatBytes([new Uint8Array(PNG_SIGNATURE), chunk("IHDR", header), chunk("IDAT", await deflate(raw)), chunk("IEND", new Uint8Array())]);
}
