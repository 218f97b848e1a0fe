// MPEG audio frame headers (ISO/IEC 11172-3 and 13818-3; MPEG 2.5 is the common extension),
// shared by the silent MP3 encoder and the MP3 probe.

/** What a 4-byte MPEG audio frame header says about its frame. */
export interface MpegAudioHeader {
  /** 1 for MPEG-1, 2 for MPEG-2, 2.5 for MPEG-2.5. */
  version: 1 | 2 | 2.5;
  layer: 1 | 2 | 3;
  bitrate: number;
  sampleRate: number;
  mono: boolean;
  frameBytes: number;
  samplesPerFrame: number;
  /** Where a Xing/Info tag starts in the frame: after the header and the Layer III side info. */
  xingOffset: number;
}

// kbit/s by bitrate index; index 0 ("free format") and 15 are not accepted.
const BITRATES: Record<string, readonly number[]> = {
  "1-1": [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  "1-2": [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  "1-3": [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  "2-1": [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  "2-2": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  "2-3": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES = { 1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 2.5: [11025, 12000, 8000] } as const;

/** Parses the frame header at `offset`, or null when the bytes there are not a valid one. */
export function readMpegAudioHeader(bytes: Uint8Array, offset: number): MpegAudioHeader | null {
  if (offset + 4 > bytes.length || bytes[offset] !== 0xff || (bytes[offset + 1]! & 0xe0) !== 0xe0) return null;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  const b3 = bytes[offset + 3]!;
  const versionBits = (b1 >> 3) & 3;
  const layerBits = (b1 >> 1) & 3;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  // Reserved values; emphasis 0b10 is reserved too and a cheap extra guard against noise.
  if (versionBits === 1 || layerBits === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3 || (b3 & 3) === 2) return null;
  const version = versionBits === 3 ? 1 : versionBits === 2 ? 2 : 2.5;
  const layer = (4 - layerBits) as 1 | 2 | 3;
  const bitrate = BITRATES[`${version === 1 ? 1 : 2}-${layer}`]![bitrateIndex]! * 1000;
  const sampleRate = SAMPLE_RATES[version][rateIndex]!;
  const padding = (b2 >> 1) & 1;
  const mono = b3 >> 6 === 3;
  const samplesPerFrame = layer === 1 ? 384 : layer === 3 && version !== 1 ? 576 : 1152;
  const frameBytes =
    layer === 1 ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4 : Math.floor((samplesPerFrame / 8) * bitrate / sampleRate) + padding;
  const sideInfo = version === 1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { version, layer, bitrate, sampleRate, mono, frameBytes, samplesPerFrame, xingOffset: 4 + sideInfo };
}
