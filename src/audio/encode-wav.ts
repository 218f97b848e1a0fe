import { writeAscii } from "./ascii-bytes.ts";

const HEADER_BYTES = 44;

/**
 * A canonical RIFF/WAVE file: one `fmt ` chunk (PCM, 16-bit, mono) then one `data` chunk,
 * little-endian throughout as RIFF requires.
 */
export function encodeWav(samples: Int16Array, sampleRate: number): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES + samples.length * 2);
  bytes.set(wavHeader(samples.length, sampleRate));
  bytes.set(pcm16LittleEndian(samples), HEADER_BYTES);
  return bytes;
}

/** The header of a WAVE file holding `sampleCount` samples, which the `data` chunk's samples follow. */
export function wavHeader(sampleCount: number, sampleRate: number): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new RangeError(`invalid sample rate ${sampleRate}`);
  const dataBytes = sampleCount * 2;
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  writeAscii(bytes, 0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  writeAscii(bytes, 8, "WAVE");
  writeAscii(bytes, 12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // WAVE_FORMAT_PCM
  view.setUint16(22, 1, true); // channels
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  writeAscii(bytes, 36, "data");
  view.setUint32(40, dataBytes, true);
  return bytes;
}

/** 16-bit samples as little-endian bytes: WAVE's data and OpenAI's raw `pcm` format. */
export function pcm16LittleEndian(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true);
  return bytes;
}
