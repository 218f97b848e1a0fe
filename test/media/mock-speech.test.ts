/**
 * The mock voice makes its audio while it streams: 4096 characters at speed 0.25 are 21
 * minutes of audio, which made in one piece held the event loop for seconds (four parallel
 * calls: 12 s without an answer to GET /health). Each slice now waits for a later turn, and
 * the bytes are those of the whole-file encoders.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { FLACDecoder } from "@wasm-audio-decoders/flac";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { encodeFlac } from "../../src/audio/encode-flac.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";
import { speechDurationSeconds, synthesizeSpeechSamples } from "../../src/audio/synthesize-speech-samples.ts";
import { encodeOpusSilence } from "../../src/audio/encode-opus-silence.ts";
import { encodeAacSilence } from "../../src/audio/encode-aac-silence.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const RATE = 24_000;
/** About 40 s of audio at speed 0.5: many slices, and a last FLAC block that is not full. */
const TEXT = "the quiet river runs under the old bridge every morning of the long summer ".repeat(6).trim();

const speechBody = (input: string, speed: number, format: string) => JSON.stringify({ model: "demo-tts", input, speed, response_format: format });

async function speak(format: string): Promise<Uint8Array> {
  const response = await gw.fetch("/v1/audio/speech", { method: "POST", headers: bearer(gw.demoKey), body: speechBody(TEXT, 0.5, format) });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

test("flac, wav and pcm stream the bytes the whole-file encoders make of the whole clip", async () => {
  const samples = synthesizeSpeechSamples(TEXT, 0.5, RATE);
  expect(samples.length).toBeGreaterThan(20 * 16_384);
  expect(Buffer.from(await speak("flac")).equals(Buffer.from(encodeFlac(samples, RATE)))).toBe(true);
  const wav = encodeWav(samples, RATE);
  expect(Buffer.from(await speak("wav")).equals(Buffer.from(wav))).toBe(true);
  expect(Buffer.from(await speak("pcm")).equals(Buffer.from(wav.subarray(44)))).toBe(true);
});

test("opus and aac (spec 4.9's formats the voice cannot encode) are silence of the clip's length, as Ogg Opus and ADTS, with their Content-Types", async () => {
  const seconds = speechDurationSeconds(TEXT, 0.5);
  for (const [format, contentType, encoded] of [
    ["opus", "audio/ogg", encodeOpusSilence(seconds, RATE)],
    ["aac", "audio/aac", encodeAacSilence(seconds, RATE)],
  ] as const) {
    const response = await gw.fetch("/v1/audio/speech", { method: "POST", headers: bearer(gw.demoKey), body: speechBody(TEXT, 0.5, format) });
    expect({ format, status: response.status, contentType: response.headers.get("content-type") }).toEqual({ format, status: 200, contentType });
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(encoded))).toBe(true);
  }
});

test("the demo voice's Opus is heard by the demo transcriber for the clip's length", async () => {
  const form = new FormData();
  form.append("model", "demo-transcribe");
  form.append("response_format", "verbose_json");
  form.append("file", new Blob([(await speak("opus")) as Uint8Array<ArrayBuffer>], { type: "audio/ogg" }), "speech.opus");
  const response = await gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${gw.demoKey}` }, body: form });
  expect(response.status).toBe(200);
  expect((await response.json()).duration).toBeCloseTo(speechDurationSeconds(TEXT, 0.5), 3);
});

test("the streamed FLAC decodes, frame CRCs checked, to the clip's every sample", async () => {
  const decoder = new FLACDecoder();
  await decoder.ready;
  try {
    const decoded = await decoder.decodeFile(await speak("flac"));
    expect(decoded.errors).toEqual([]);
    expect(decoded.samplesDecoded).toBe(synthesizeSpeechSamples(TEXT, 0.5, RATE).length);
  } finally {
    decoder.free();
  }
});

test("a 21-minute clip is made a slice at a time, other work running between any two slices", async () => {
  const longest = Array.from({ length: 2048 }, () => "a").join(" ");
  // app.request: the body as the gateway makes it, with no socket between that could space reads out.
  const response = await gw.app.request("/v1/audio/speech", { method: "POST", headers: bearer(gw.demoKey), body: speechBody(longest, 0.25, "flac") });
  expect(response.status).toBe(200);
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const reader = response.body!.getReader();
  const turnsAtChunk: number[] = [];
  for (let i = 0; i < 30; i++) {
    expect((await reader.read()).done).toBe(false);
    turnsAtChunk.push(turns);
  }
  counting = false;
  await reader.cancel();
  for (let i = 1; i < turnsAtChunk.length; i++) expect(turnsAtChunk[i]!).toBeGreaterThan(turnsAtChunk[i - 1]!);
});

test("instructions to the demo voice, which speaks one way, and fields it does not know are named in x-gateway-warnings", async () => {
  const body = JSON.stringify({ model: "demo-tts", input: "Hello.", instructions: "Whisper it.", loudness: -16 });
  const response = await gw.fetch("/v1/audio/speech", { method: "POST", headers: bearer(gw.demoKey), body });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  const warnings = response.headers.get("x-gateway-warnings");
  expect(warnings).toContain("instructions");
  expect(warnings).toContain("loudness");
});
