/**
 * Spec 4.10, 4.11 and DESIGN.md section 5: the multipart audio endpoints. Bad uploads are a
 * 4xx in the error shape (400, or 413 past the 25 MB cap) with no usage row, and no temp
 * file is left in the upload directory whatever happened. Each response_format answers with
 * its Content-Type and shape, and the mock transcript's duration is the file's real one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser, sleep } from "../helpers/common.ts";
import { expectError } from "../auth/support.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";
import { encodeMp3Silence } from "../../src/audio/encode-mp3-silence.ts";
import { synthesizeSpeechSamples } from "../../src/audio/synthesize-speech-samples.ts";
import { DEFAULT_UPLOAD_DIR } from "../../src/runtime/node-temp-upload.ts";

const MiB = 1024 * 1024;
/** The encoders return Uint8Array<ArrayBufferLike>; Blob and fetch want an ArrayBuffer-backed view, which they are. */
type Bytes = Uint8Array<ArrayBuffer>;
const asBytes = (view: Uint8Array) => view as Bytes;
const SAMPLE_RATE = 16_000;
const SPEECH_SAMPLES = synthesizeSpeechSamples("the quiet river runs under the old bridge every morning of the long summer", 1, SAMPLE_RATE);
/** A real WAV of synthesized speech, and its exact duration. */
const SPEECH_WAV = asBytes(encodeWav(SPEECH_SAMPLES, SAMPLE_RATE));
const SPEECH_SECONDS = SPEECH_SAMPLES.length / SAMPLE_RATE;

let gw: TestGateway;
let user: { id: string; key: string };
/** Upload-dir entries that existed before this file ran (other processes may use the dir too). */
let before: Set<string>;

const listUploads = () => (existsSync(DEFAULT_UPLOAD_DIR) ? readdirSync(DEFAULT_UPLOAD_DIR) : []);

beforeAll(async () => {
  before = new Set(listUploads());
  gw = await startTestGateway();
  const created = await adminCreateUser(gw, { email: `up-${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: 10 });
  user = { id: created.id, key: (await adminCreateToken(gw, { user_id: created.id, name: "k" })).key };
});
afterAll(() => gw.close());

/** Temp files this test created and that are still there; a removal may trail the response by a moment. */
async function expectNoLeftovers(): Promise<void> {
  let left: string[] = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    left = listUploads().filter((name) => !before.has(name));
    if (left.length === 0) return;
    await sleep(25);
  }
  expect(left).toEqual([]);
}

async function usageRowCount(): Promise<number> {
  await gw.services.usage.flush();
  return (await gw.database.db.selectFrom("usage_logs").select("id").where("user_id", "=", user.id).execute()).length;
}

function form(fields: Record<string, string>, file?: { bytes: Bytes; name?: string; type?: string }): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  if (file) body.append("file", new Blob([file.bytes], { type: file.type ?? "audio/wav" }), file.name ?? "speech.wav");
  return body;
}

function upload(body: FormData | string | Bytes, path = "/v1/audio/transcriptions", headers: Record<string, string> = {}): Promise<Response> {
  return gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${user.key}`, ...headers }, body });
}

const PATHS = ["/v1/audio/transcriptions", "/v1/audio/translations"] as const;

for (const path of PATHS) {
  describe(`bad uploads to ${path}`, () => {
    /** Sends `body`, expects a 400 naming `mentions`, and that it left nothing behind. */
    async function refused(body: FormData | string | Bytes, mentions: string, headers: Record<string, string> = {}): Promise<void> {
      const rowsBefore = await usageRowCount();
      const message = await expectError(await upload(body, path, headers), 400, "invalid_request_error");
      expect(message).toContain(mentions);
      expect(await usageRowCount()).toBe(rowsBefore);
      await expectNoLeftovers();
    }

    test("a JSON body instead of multipart → 400", () =>
      refused(JSON.stringify({ model: "demo-transcribe", file: "speech.wav" }), "multipart/form-data", { "content-type": "application/json" }));

    test("no 'file' part → 400 \"'file' is required\"", () => refused(form({ model: "demo-transcribe" }), "'file' is required"));

    test("an empty file → 400", () => refused(form({}, { bytes: new Uint8Array(0) }), "empty"));

    test("a text file → 400 (not audio)", () =>
      refused(form({}, { bytes: new TextEncoder().encode("this is plainly not audio, just words\n".repeat(50)), name: "notes.txt", type: "text/plain" }), "not an audio file"));

    test("PNG bytes named .wav → 400 (not audio)", () => {
      const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0);
      return refused(form({}, { bytes: png, type: "audio/wav" }), "not an audio file");
    });

    test("response_format xml → 400", () => refused(form({ response_format: "xml" }, { bytes: SPEECH_WAV }), "'response_format'"));

    test("temperature abc → 400", () => refused(form({ temperature: "abc" }, { bytes: SPEECH_WAV }), "'temperature'"));

    test("temperature empty → 400", () => refused(form({ temperature: "" }, { bytes: SPEECH_WAV }), "'temperature'"));
    test("temperature 1.5 → 400", () => refused(form({ temperature: "1.5" }, { bytes: SPEECH_WAV }), "'temperature'"));

    test("stream yes (the SDK sends a boolean as true or false) → 400", () => refused(form({ stream: "yes" }, { bytes: SPEECH_WAV }), "'stream'"));

    // OpenAI's API reference documents a stream of a transcription, not of a translation.
    if (path === "/v1/audio/translations") test("stream true → 400", () => refused(form({ stream: "true" }, { bytes: SPEECH_WAV }), "'stream'"));

    test("a chat model → 400 (wrong mode)", () => refused(form({ model: "demo-chat" }, { bytes: SPEECH_WAV }), "demo-chat"));

    test("the file in a part not named 'file' → 400 naming the field", () => {
      const body = new FormData();
      body.append("audio", new Blob([SPEECH_WAV], { type: "audio/wav" }), "speech.wav");
      return refused(body, '"audio"');
    });

    test("two files → 400", () => {
      const body = form({}, { bytes: SPEECH_WAV });
      body.append("file", new Blob([SPEECH_WAV], { type: "audio/wav" }), "again.wav");
      return refused(body, "one file");
    });

    test("multipart without a boundary parameter → 400", () => refused("--x--\r\n", "boundary", { "content-type": "multipart/form-data; charset=utf-8" }));

    test("a truncated multipart body → 400", () => {
      const boundary = "gateway-test-boundary";
      const head = new TextEncoder().encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ndemo-transcribe\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
      );
      const body = new Uint8Array(head.length + 4000);
      body.set(head);
      body.set(SPEECH_WAV.subarray(0, 4000), head.length);
      return refused(body, "multipart", { "content-type": `multipart/form-data; boundary=${boundary}` });
    });
  });
}

describe("language", () => {
  for (const language of ["xx", "english", "e"]) {
    test(`language "${language}" → 400`, async () => {
      const message = await expectError(await upload(form({ language }, { bytes: SPEECH_WAV })), 400, "invalid_request_error");
      expect(message).toContain("'language'");
      await expectNoLeftovers();
    });
  }

  test('language "EN" is accepted and reported lower-cased, as the language it names', async () => {
    const response = await upload(form({ language: "EN", response_format: "verbose_json" }, { bytes: SPEECH_WAV }));
    expect(response.status).toBe(200);
    expect((await response.json()).language).toBe("english");
  });

  test("temperature 0.5 is accepted", async () => {
    expect((await upload(form({ temperature: "0.5" }, { bytes: SPEECH_WAV }))).status).toBe(200);
  });
});

test("a file whose filename* does not decode is still the file (it was taken for a text field: 413 past 64 KB)", async () => {
  expect(SPEECH_WAV.length).toBeGreaterThan(64 * 1024);
  const boundary = "gateway-test-boundary";
  const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''%E2%82%AC%ZZ.wav\r\nContent-Type: audio/wav\r\n\r\n`);
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const body = asBytes(new Uint8Array([...head, ...SPEECH_WAV, ...tail]));
  const response = await upload(body, "/v1/audio/transcriptions", { "content-type": `multipart/form-data; boundary=${boundary}` });
  expect(response.status).toBe(200);
  expect((await response.json()).text.length).toBeGreaterThan(0);
  await expectNoLeftovers();
});

describe("the 25 MB upload cap", () => {
  test("the gateway runs with the default cap of 25 MiB", () => {
    expect(gw.config.maxUploadBytes).toBe(25 * MiB);
  });

  test("a 26 MB upload → 413 request_too_large, no usage row, no temp file left", async () => {
    const rowsBefore = await usageRowCount();
    const bytes = new Uint8Array(26 * MiB);
    bytes.set(SPEECH_WAV.subarray(0, 44));
    const message = await expectError(await upload(form({ model: "demo-transcribe" }, { bytes })), 413, "request_too_large");
    expect(message).toContain("25 MB");
    expect(await usageRowCount()).toBe(rowsBefore);
    await expectNoLeftovers();
  }, 20_000);

  test("a WAV of exactly 25 MiB is accepted, its full length heard", async () => {
    const rate = 8_000;
    const samples = new Int16Array((25 * MiB - 44) / 2);
    const wav = asBytes(encodeWav(samples, rate));
    expect(wav.length).toBe(25 * MiB);
    const response = await upload(form({ response_format: "verbose_json" }, { bytes: wav }));
    expect(response.status).toBe(200);
    expect((await response.json()).duration).toBeCloseTo(samples.length / rate, 6);
    await expectNoLeftovers();
  }, 20_000);
});

/** The transcript's segments start at 0, follow one another without gaps, and end at the duration. */
function expectSegmentsTile(segments: { id: number; start: number; end: number }[], duration: number): void {
  expect(segments.length).toBeGreaterThan(0);
  expect(segments[0]!.start).toBe(0);
  segments.forEach((segment, i) => {
    expect(segment.id).toBe(i);
    expect(segment.end).toBeGreaterThan(segment.start);
    if (i > 0) expect(segment.start).toBe(segments[i - 1]!.end);
  });
  expect(Math.abs(segments.at(-1)!.end - duration)).toBeLessThan(0.01);
}

describe("response formats", () => {
  test("json: application/json, exactly {text}", async () => {
    const response = await upload(form({ response_format: "json" }, { bytes: SPEECH_WAV }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text.length).toBeGreaterThan(0);
  });

  test("the default format is json", async () => {
    const response = await upload(form({}, { bytes: SPEECH_WAV }));
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(Object.keys(await response.json())).toEqual(["text"]);
  });

  test("text: text/plain, the same transcript as json", async () => {
    const json = await (await upload(form({ response_format: "json" }, { bytes: SPEECH_WAV }))).json();
    const response = await upload(form({ response_format: "text" }, { bytes: SPEECH_WAV }));
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect((await response.text()).trim()).toBe(json.text);
  });

  test("verbose_json: application/json; duration is the WAV's real length and the segments tile it", async () => {
    const response = await upload(form({ response_format: "verbose_json" }, { bytes: SPEECH_WAV }));
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = await response.json();
    expect(body.task).toBe("transcribe");
    expect(typeof body.language).toBe("string");
    expect(Math.abs(body.duration - SPEECH_SECONDS)).toBeLessThan(0.01);
    expectSegmentsTile(body.segments, SPEECH_SECONDS);
    expect(body.segments.map((s: any) => s.text.trim()).join(" ")).toBe(body.text);
  });

  test("verbose_json of an MP3: duration is the MP3's frame count times 1152 / 44100", async () => {
    const mp3 = asBytes(encodeMp3Silence(12.5));
    const frames = Math.round((12.5 * 44_100) / 1152);
    const response = await upload(form({ response_format: "verbose_json" }, { bytes: mp3, name: "silence.mp3", type: "audio/mpeg" }));
    const body = await response.json();
    expect(Math.abs(body.duration - (frames * 1152) / 44_100)).toBeLessThan(0.01);
    expectSegmentsTile(body.segments, (frames * 1152) / 44_100);
  });

  test("srt: text/plain, numbered cues with comma milliseconds", async () => {
    const response = await upload(form({ response_format: "srt" }, { bytes: SPEECH_WAV }));
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const cues = (await response.text()).trim().split(/\n\n/);
    expect(cues.length).toBeGreaterThan(0);
    cues.forEach((cue, i) => {
      const [number, times, text] = cue.split("\n");
      expect(number).toBe(String(i + 1));
      expect(times).toMatch(/^\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}$/);
      expect(text!.length).toBeGreaterThan(0);
    });
    expect(cues[0]).toStartWith("1\n00:00:00,000 --> ");
  });

  test("vtt: text/plain, WEBVTT header then cues with dot milliseconds", async () => {
    const response = await upload(form({ response_format: "vtt" }, { bytes: SPEECH_WAV }));
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toStartWith("WEBVTT\n\n");
    const cues = text.slice("WEBVTT\n\n".length).trim().split(/\n\n/);
    for (const cue of cues) expect(cue.split("\n")[0]).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });

  test("translations: json is {text}; verbose_json says task translate, language english", async () => {
    const json = await upload(form({}, { bytes: SPEECH_WAV }), "/v1/audio/translations");
    expect(json.status).toBe(200);
    expect(Object.keys(await json.json())).toEqual(["text"]);
    const verbose = await (await upload(form({ response_format: "verbose_json" }, { bytes: SPEECH_WAV }), "/v1/audio/translations")).json();
    expect({ task: verbose.task, language: verbose.language }).toEqual({ task: "translate", language: "english" });
    expect(Math.abs(verbose.duration - SPEECH_SECONDS)).toBeLessThan(0.01);
  });

  test("every successful upload above left no temp file behind", () => expectNoLeftovers());
});

