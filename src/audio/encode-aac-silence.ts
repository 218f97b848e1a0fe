/** AAC-LC codes 1024 samples a frame. */
const FRAME_SAMPLES = 1024;
/** ADTS's sampling_frequency_index for each rate it can name (ISO/IEC 14496-3, 1.6.3.4). */
const RATE_INDEX: Readonly<Record<number, number>> = { 96000: 0, 88200: 1, 64000: 2, 48000: 3, 44100: 4, 32000: 5, 24000: 6, 22050: 7, 16000: 8, 12000: 9, 11025: 10, 8000: 11 };
/**
 * One silent mono raw_data_block: a single channel element with no scale factor bands
 * (max_sfb 0, so no spectral data), then the END element; the frame encoders write for
 * digital silence.
 */
const SILENT_BLOCK = Uint8Array.of(0x01, 0x40, 0x20, 0x07);
const FRAME_BYTES = 7 + SILENT_BLOCK.length;

/** The 7-byte ADTS header (no CRC) of an AAC-LC mono frame of `frameBytes` at rate index `rateIndex`. */
function adtsHeader(rateIndex: number, frameBytes: number): Uint8Array {
  const profile = 1; // AAC LC: audio object type 2, less one
  const channels = 1;
  const fullness = 0x7ff; // variable bit rate
  return Uint8Array.of(
    0xff,
    0xf1, // syncword, MPEG-4, layer 0, no CRC
    (profile << 6) | (rateIndex << 2) | (channels >> 2),
    ((channels & 3) << 6) | (frameBytes >> 11),
    (frameBytes >> 3) & 0xff,
    ((frameBytes & 7) << 5) | (fullness >> 6),
    ((fullness & 0x3f) << 2) | 0, // one raw data block
  );
}

/**
 * An ADTS AAC stream of silence lasting `durationSeconds` at `sampleRate` (whole frames of
 * 1024 samples, at least one), as OpenAI's `aac` speech format is. No AAC encoder ships in
 * the gateway: the mock voice's AAC is silence, like its MP3.
 */
export function encodeAacSilence(durationSeconds: number, sampleRate: number): Uint8Array {
  if (!(durationSeconds >= 0) || !Number.isFinite(durationSeconds)) throw new RangeError(`invalid duration ${durationSeconds}`);
  const rateIndex = RATE_INDEX[sampleRate];
  if (rateIndex === undefined) throw new RangeError(`ADTS names no sample rate ${sampleRate}`);
  const frames = Math.max(1, Math.round((durationSeconds * sampleRate) / FRAME_SAMPLES));
  const header = adtsHeader(rateIndex, FRAME_BYTES);
  const out = new Uint8Array(frames * FRAME_BYTES);
  for (let at = 0; at < out.length; at += FRAME_BYTES) {
    out.set(header, at);
    out.set(SILENT_BLOCK, at + header.length);
  }
  return out;
}
