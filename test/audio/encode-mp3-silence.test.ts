import { describe, expect, test } from "bun:test";
import { MPEGDecoder } from "mpg123-decoder";
import { encodeMp3Silence } from "../../src/audio/encode-mp3-silence.ts";
import { readMpegAudioHeader } from "../../src/audio/mpeg-audio-header.ts";
import { probeAudio } from "../../src/audio/probe-audio.ts";
import { bytesFile } from "../../src/audio/random-access-file.ts";

const FRAME_SECONDS = 1152 / 44100;

/** Decodes with mpg123 (WASM); gapless trimming off so every frame's 1152 samples count. */
async function decode(mp3: Uint8Array) {
  const decoder = new MPEGDecoder({ enableGapless: false });
  await decoder.ready;
  try {
    return decoder.decode(mp3);
  } finally {
    decoder.free();
  }
}

describe("encodeMp3Silence", () => {
  test.each([0.5, 3.2, 61])("%p s decodes with mpg123 to silence of that length, within half a frame", async (seconds) => {
    const mp3 = encodeMp3Silence(seconds);
    const decoded = await decode(mp3);
    expect(decoded.errors).toEqual([]);
    expect(decoded.sampleRate).toBe(44100);
    // mpg123 treats the Info frame as a tag, not audio: one frame fewer than the file holds.
    expect(decoded.samplesDecoded).toBe((mp3.length / 417 - 1) * 1152);
    expect(Math.abs(decoded.samplesDecoded / 44100 - seconds)).toBeLessThanOrEqual(FRAME_SECONDS / 2);
    for (const channel of decoded.channelData) expect(channel.every((sample) => sample === 0)).toBe(true);
    const probe = await probeAudio(bytesFile(mp3));
    expect(probe).toMatchObject({ format: "mp3", durationSeconds: decoded.samplesDecoded / 44100 });
  });

  test("every frame is a 417-byte MPEG-1 Layer III frame at 128 kbit/s, 44.1 kHz, mono, unpadded", () => {
    const mp3 = encodeMp3Silence(1);
    expect(mp3.length % 417).toBe(0);
    for (let at = 0; at < mp3.length; at += 417) {
      expect(readMpegAudioHeader(mp3, at)).toMatchObject({ version: 1, layer: 3, bitrate: 128000, sampleRate: 44100, mono: true, frameBytes: 417 });
    }
  });

  test("the first frame carries an Info tag with the frame and byte counts", () => {
    const mp3 = encodeMp3Silence(2);
    const view = new DataView(mp3.buffer);
    // After the 4-byte header and 17 bytes of mono MPEG-1 side info.
    expect(String.fromCharCode(...mp3.subarray(21, 25))).toBe("Info");
    expect(view.getUint32(25)).toBe(3);
    expect(view.getUint32(29)).toBe(Math.round(2 / FRAME_SECONDS));
    expect(view.getUint32(33)).toBe(mp3.length);
  });

  test("a zero duration still gives one audio frame; a negative one is refused", async () => {
    expect((await decode(encodeMp3Silence(0))).samplesDecoded).toBe(1152);
    expect(() => encodeMp3Silence(-1)).toThrow(RangeError);
    expect(() => encodeMp3Silence(Number.NaN)).toThrow(RangeError);
  });
});
