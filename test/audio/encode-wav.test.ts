import { describe, expect, test } from "bun:test";
import { WaveFile } from "wavefile";
import { encodeWav } from "../../src/audio/encode-wav.ts";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";

/** A ramp of samples covering the int16 extremes. */
function ramp(length: number): Int16Array {
  const samples = new Int16Array(length);
  for (let i = 0; i < length; i++) samples[i] = ((i * 997) % 65536) - 32768;
  return samples;
}

describe("encodeWav", () => {
  test("writes the canonical 44-byte PCM header, field by field", () => {
    const wav = encodeWav(ramp(10), 24000);
    const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
    const text = (at: number) => String.fromCharCode(...wav.subarray(at, at + 4));
    expect(wav.length).toBe(44 + 20);
    expect(text(0)).toBe("RIFF");
    expect(view.getUint32(4, true)).toBe(wav.length - 8);
    expect(text(8)).toBe("WAVE");
    expect(text(12)).toBe("fmt ");
    expect(view.getUint32(16, true)).toBe(16);
    expect(view.getUint16(20, true)).toBe(1); // PCM
    expect(view.getUint16(22, true)).toBe(1); // mono
    expect(view.getUint32(24, true)).toBe(24000);
    expect(view.getUint32(28, true)).toBe(48000);
    expect(view.getUint16(32, true)).toBe(2);
    expect(view.getUint16(34, true)).toBe(16);
    expect(text(36)).toBe("data");
    expect(view.getUint32(40, true)).toBe(20);
    expect(view.getInt16(44, true)).toBe(-32768);
  });

  test("is read back sample for sample by an independent parser (wavefile)", () => {
    const samples = ramp(5000);
    const parsed = new WaveFile(encodeWav(samples, 16000));
    const fmt = parsed.fmt as { audioFormat: number; numChannels: number; sampleRate: number; bitsPerSample: number };
    expect(fmt).toMatchObject({ audioFormat: 1, numChannels: 1, sampleRate: 16000, bitsPerSample: 16 });
    expect(Array.from(parsed.getSamples(false, Int16Array) as unknown as Int16Array)).toEqual(Array.from(samples));
  });

  test.each([0.5, 3.2, 61])("round-trips a duration of %p s through probeAudio exactly", async (seconds) => {
    const wav = encodeWav(new Int16Array(Math.round(seconds * 44100)), 44100);
    expect(await probeAudio(bytesFile(wav))).toMatchObject({ format: "wav", durationSeconds: seconds });
  });

  test("rejects a sample rate that is not a positive integer", () => {
    expect(() => encodeWav(new Int16Array(1), 0)).toThrow(RangeError);
    expect(() => encodeWav(new Int16Array(1), 44.1)).toThrow(RangeError);
  });
});
