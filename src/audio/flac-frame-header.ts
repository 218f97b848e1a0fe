// FLAC frame header layout and checksums (RFC 9639 section 9.1), shared by the encoder,
// which writes headers, and the probe, which finds the last one in a stream of unknown length.

/** The parts of a frame header the probe needs to place the frame in time. */
export interface FlacFrameHeader {
  /** True for a variable-blocksize stream, where `number` is a sample number, not a frame number. */
  variable: boolean;
  number: number;
  blockSize: number;
}

const SAMPLE_RATE_CODES = new Map<number, number>([
  [88200, 1], [176400, 2], [192000, 3], [8000, 4], [16000, 5], [22050, 6],
  [24000, 7], [32000, 8], [44100, 9], [48000, 10], [96000, 11],
]);
// Bits per sample codes; 0b011 is reserved.
const SAMPLE_SIZE_CODES = new Map<number, number>([[8, 1], [12, 2], [16, 4], [20, 5], [24, 6], [32, 7]]);

// The smallest frame is a 6-byte header (sync, two bytes of codes, a one-byte number, CRC-8)
// and its CRC-16; subframes only add to it. A block holds at most 65,536 samples (its size is
// coded as a 16-bit value minus one).
const SMALLEST_FRAME_BYTES = 8;
const LARGEST_BLOCK_SAMPLES = 65_536;

/**
 * The most samples `bytes` of FLAC frames can hold: every frame at its smallest and its
 * block at its largest. No real stream comes near it (a 4096-sample block of 16-bit audio
 * takes kilobytes), so a header that claims more does not describe the file.
 */
export function mostFlacSamples(bytes: number): number {
  return Math.floor(Math.max(0, bytes) / SMALLEST_FRAME_BYTES) * LARGEST_BLOCK_SAMPLES;
}

/** CRC-8 of a frame header: polynomial x^8 + x^2 + x + 1, initial value 0. */
export function flacCrc8(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= bytes[i]!;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

/** CRC-16 steps for each value of the top byte: a frame's CRC covers every byte of it. */
const CRC16_TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/** CRC-16 of a whole frame: polynomial x^16 + x^15 + x^2 + 1, initial value 0. */
export function flacCrc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[(crc >> 8) ^ bytes[i]!]!;
  return crc;
}

/** The 4-bit block size code and any value that follows the coded number. */
function blockSizeCode(blockSize: number): { code: number; extra: number[] } {
  for (let code = 8; code <= 15; code++) if (blockSize === 256 << (code - 8)) return { code, extra: [] };
  for (let code = 2; code <= 5; code++) if (blockSize === 576 << (code - 2)) return { code, extra: [] };
  if (blockSize === 192) return { code: 1, extra: [] };
  if (blockSize <= 256) return { code: 6, extra: [blockSize - 1] };
  return { code: 7, extra: [(blockSize - 1) >> 8, (blockSize - 1) & 0xff] };
}

/**
 * The 4-bit sample rate code and any value that follows the block size. Rates without a
 * code of their own are written out too, rather than left to STREAMINFO as the format
 * allows, because some frame-by-frame decoders never read STREAMINFO.
 */
function sampleRateCode(rate: number): { code: number; extra: number[] } {
  const common = SAMPLE_RATE_CODES.get(rate);
  if (common !== undefined) return { code: common, extra: [] };
  if (rate % 1000 === 0 && rate / 1000 <= 0xff) return { code: 12, extra: [rate / 1000] };
  if (rate <= 0xffff) return { code: 13, extra: [rate >> 8, rate & 0xff] };
  if (rate % 10 === 0 && rate / 10 <= 0xffff) return { code: 14, extra: [(rate / 10) >> 8, (rate / 10) & 0xff] };
  return { code: 0, extra: [] };
}

/** The "UTF-8"-like coding of frame and sample numbers (up to 36 bits in 7 bytes). */
function codeNumber(value: number): number[] {
  if (value < 0x80) return [value];
  let length = 2;
  while (length < 7 && value >= 2 ** (5 * length + 1)) length++;
  const bytes: number[] = [];
  let rest = value;
  for (let i = 1; i < length; i++) {
    bytes.unshift(0x80 | (rest % 64));
    rest = Math.floor(rest / 64);
  }
  bytes.unshift(((0xff << (8 - length)) & 0xff) | rest);
  return bytes;
}

/** The header of frame `frameNumber` of a fixed-blocksize stream, CRC-8 included. */
export function writeFlacFrameHeader(frameNumber: number, blockSize: number, sampleRate: number, channels: number, bitsPerSample: number): Uint8Array {
  const block = blockSizeCode(blockSize);
  const rate = sampleRateCode(sampleRate);
  const sizeCode = SAMPLE_SIZE_CODES.get(bitsPerSample) ?? 0;
  const header = [
    0xff, 0xf8,
    (block.code << 4) | rate.code,
    ((channels - 1) << 4) | (sizeCode << 1),
    ...codeNumber(frameNumber),
    ...block.extra,
    ...rate.extra,
  ];
  header.push(flacCrc8(Uint8Array.from(header)));
  return Uint8Array.from(header);
}

/** Reads a coded number at `offset`: its value and byte length, or null when malformed. */
function readCodedNumber(bytes: Uint8Array, offset: number): { value: number; length: number } | null {
  const lead = bytes[offset];
  if (lead === undefined) return null;
  if (lead < 0x80) return { value: lead, length: 1 };
  let length = 0;
  while (length < 8 && lead & (0x80 >> length)) length++;
  if (length < 2 || length > 7) return null;
  let value = lead & (0x7f >> length);
  for (let i = 1; i < length; i++) {
    const next = bytes[offset + i];
    if (next === undefined || (next & 0xc0) !== 0x80) return null;
    value = value * 64 + (next & 0x3f);
  }
  return { value, length };
}

/**
 * Parses the frame header at `offset`, or null when the bytes there are not one (reserved
 * codes, a bad coded number or a CRC-8 mismatch). Also returns where the header ends.
 */
export function readFlacFrameHeader(bytes: Uint8Array, offset: number): (FlacFrameHeader & { end: number }) | null {
  if (bytes[offset] !== 0xff || ((bytes[offset + 1] ?? 0) & 0xfe) !== 0xf8) return null;
  const sizeCode = (bytes[offset + 2] ?? 0) >> 4;
  const rateCode = (bytes[offset + 2] ?? 0) & 0x0f;
  const channelByte = bytes[offset + 3] ?? 0xff;
  if (sizeCode === 0 || rateCode === 15 || channelByte >> 4 > 10 || ((channelByte >> 1) & 7) === 3 || channelByte & 1) return null;
  const coded = readCodedNumber(bytes, offset + 4);
  if (!coded) return null;
  let at = offset + 4 + coded.length;
  let blockSize = sizeCode === 1 ? 192 : sizeCode < 8 ? 576 << (sizeCode - 2) : 256 << (sizeCode - 8);
  if (sizeCode === 6) {
    blockSize = (bytes[at] ?? 0) + 1;
    at += 1;
  } else if (sizeCode === 7) {
    blockSize = (((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0)) + 1;
    at += 2;
  }
  at += rateCode === 12 ? 1 : rateCode >= 13 ? 2 : 0;
  if (at >= bytes.length || flacCrc8(bytes, offset, at) !== bytes[at]) return null;
  return { variable: (bytes[offset + 1]! & 1) === 1, number: coded.value, blockSize, end: at + 1 };
}
