import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import OpenAI, { toFile } from "openai";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import {
  createChannel,
  isMp3,
  isWav,
  priceModel,
  sha256Hex,
  speechWav,
  startOpenAiMediaUpstream,
  upstreamEmbedding,
  upstreamImageUrl,
  upstreamRerankScore,
  upstreamSpeechBytes,
  upstreamTranscriptBody,
  upstreamTranscriptText,
  wavSeconds,
  type MediaUpstream,
} from "../helpers/openai-media-upstream.ts";

/**
 * The official `openai` SDK, unchanged but for base URL and key, on the media endpoints:
 * against the demo `mock` channel and against an `openai` channel whose upstream is a
 * loopback OpenAI-compatible server. Also the SDK's error classes for the gateway's errors.
 */

let gw: TestGateway;
let up: MediaUpstream;
let client: OpenAI;
let dir: string;

/** Model IDs per target: the demo mock channel's and the loopback openai channel's. */
const TARGETS = {
  mock: { embed: "demo-embed", rerank: "demo-rerank", image: "demo-image", tts: "demo-tts", whisper: "demo-transcribe" },
  openai: { embed: "sdk-embed", rerank: "sdk-rerank", image: "sdk-image", tts: "sdk-tts", whisper: "sdk-whisper" },
} as const;
type Target = keyof typeof TARGETS;
const BOTH: Target[] = ["mock", "openai"];

const sdkClient = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, timeout: 10_000 });

beforeAll(async () => {
  up = startOpenAiMediaUpstream();
  gw = await startTestGateway();
  dir = mkdtempSync(join(tmpdir(), "sdk-media-"));
  const o = TARGETS.openai;
  await createChannel(gw, { name: "sdk media", type: "openai", base_url: up.url, api_key: "sk-sdk-media-upstream", models: Object.values(o) });
  await priceModel(gw, o.embed, "embeddings");
  await priceModel(gw, o.rerank, "rerank");
  await priceModel(gw, o.image, "images");
  await priceModel(gw, o.tts, "speech");
  await priceModel(gw, o.whisper, "transcriptions");
  client = sdkClient(gw.demoKey);
});
afterAll(async () => {
  await gw.close();
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => up.reset());

/** client.audio.speech.create, its body piped to a file in the temp dir; the file's bytes. */
async function speakToFile(model: string, input: string, format: "mp3" | "wav"): Promise<Uint8Array> {
  const response = await client.audio.speech.create({ model, input, voice: "alloy", response_format: format });
  expect(response.headers.get("content-type")).toBe(format === "mp3" ? "audio/mpeg" : "audio/wav");
  const path = join(dir, `${crypto.randomUUID()}.${format}`);
  await pipeline(Readable.fromWeb(response.body as any), createWriteStream(path));
  return new Uint8Array(readFileSync(path));
}

const wav = speechWav("one two three four five six seven eight");

describe.each(BOTH)("against the %s channel", (target) => {
  const m = TARGETS[target];

  test("embeddings: the SDK's default (base64) equals encoding_format float to float32 precision", async () => {
    const input = ["the cat sat on the mat", "a dog in the fog"];
    const decoded = await client.embeddings.create({ model: m.embed, input });
    const floats = await client.embeddings.create({ model: m.embed, input, encoding_format: "float" });
    expect(decoded.data).toHaveLength(2);
    for (const i of [0, 1]) {
      const vector = floats.data[i]!.embedding;
      expect(vector.length).toBeGreaterThan(0);
      expect(decoded.data[i]!.embedding).toEqual(vector.map(Math.fround));
      if (target === "openai") expect(vector).toEqual(upstreamEmbedding(input[i]!));
    }
    expect(decoded.usage.prompt_tokens).toBe(floats.usage.prompt_tokens);
  });

  test("images.generate: one image with a URL and a revised prompt", async () => {
    const image = await client.images.generate({ model: m.image, prompt: "a teapot on a table", size: "1024x1024" });
    expect(Number.isInteger(image.created)).toBe(true);
    expect(image.data).toHaveLength(1);
    const url = image.data![0]!.url!;
    if (target === "openai") expect(url).toBe(upstreamImageUrl(0));
    else {
      expect(url).toStartWith("data:image/png;base64,");
      // The PNG signature.
      expect([...Buffer.from(url.split(",")[1]!, "base64").subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    }
    expect(typeof image.data![0]!.revised_prompt).toBe("string");
  });

  test("audio.speech.create streamed to a file: a valid MP3 and WAV by header", async () => {
    const input = "Streaming speech to a file works.";
    const mp3 = await speakToFile(m.tts, input, "mp3");
    const wavFile = await speakToFile(m.tts, input, "wav");
    expect(isMp3(mp3)).toBe(true);
    expect(isWav(wavFile)).toBe(true);
    if (target === "openai") {
      expect(sha256Hex(mp3)).toBe(sha256Hex(upstreamSpeechBytes(input, "mp3")));
      expect(sha256Hex(wavFile)).toBe(sha256Hex(upstreamSpeechBytes(input, "wav")));
    }
  });

  test("client.post('/rerank'): results highest first, indices into the documents", async () => {
    const documents = ["Paris is the capital of France.", "Bananas are yellow.", "France borders Spain; Paris is its capital city."];
    const body: any = await client.post("/rerank", { body: { model: m.rerank, query: "capital of France", documents, return_documents: true } });
    expect(body.results).toHaveLength(3);
    const scores = body.results.map((r: any) => r.relevance_score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    for (const r of body.results) expect(r.document.text).toBe(documents[r.index]);
    expect(body.results.at(-1).index).toBe(1);
    if (target === "openai") expect(scores).toEqual(documents.map((d) => upstreamRerankScore("capital of France", d)).sort((a, b) => b - a));
    expect(Number.isInteger(body.meta.tokens_used)).toBe(true);
  });

  test("audio.translations.create: English text", async () => {
    const result = await client.audio.translations.create({ model: m.whisper, file: await toFile(wav, "speech.wav", { type: "audio/wav" }) });
    expect(typeof result.text).toBe("string");
    expect(result.text.length).toBeGreaterThan(0);
    if (target === "openai") {
      expect(result.text).toBe(upstreamTranscriptText("translate", { name: "speech.wav", size: wav.length }));
      expect(up.requests[0]!.path).toBe("/v1/audio/translations");
    }
  });

  test("audio.transcriptions.create from a fs ReadStream: the file arrives whole", async () => {
    const path = join(dir, `upload-${target}.wav`);
    writeFileSync(path, wav);
    const result = await client.audio.transcriptions.create({ model: m.whisper, file: createReadStream(path) });
    expect(result.text.length).toBeGreaterThan(0);
    if (target === "openai") {
      expect(result.text).toBe(upstreamTranscriptText("transcribe", { name: `upload-${target}.wav`, size: wav.length }));
      expect(up.requests[0]!.file!.sha256).toBe(sha256Hex(wav));
    }
  });
});

describe.each(BOTH)("transcription formats through the SDK, %s channel", (target) => {
  const model = TARGETS[target].whisper;
  const file = () => toFile(wav, "formats.wav", { type: "audio/wav" });
  const expected = (format: string) => upstreamTranscriptBody(upstreamTranscriptText("transcribe", { name: "formats.wav", size: wav.length }), format, "transcribe").body;

  test("json: {text}", async () => {
    const result = await client.audio.transcriptions.create({ model, file: await file(), response_format: "json" });
    expect(Object.keys(result)).toEqual(["text"]);
    if (target === "openai") expect(result).toEqual(JSON.parse(expected("json")));
  });

  test("text: a plain string", async () => {
    const result = await client.audio.transcriptions.create({ model, file: await file(), response_format: "text" });
    expect(typeof result).toBe("string");
    expect(result.trim().length).toBeGreaterThan(0);
    if (target === "openai") expect(result).toBe(expected("text"));
  });

  test("srt: numbered cues with comma milliseconds", async () => {
    const result = await client.audio.transcriptions.create({ model, file: await file(), response_format: "srt" });
    expect(typeof result).toBe("string");
    expect(result).toStartWith("1\n00:00:00,000 --> ");
    if (target === "openai") expect(result).toBe(expected("srt"));
  });

  test("vtt: a WEBVTT document", async () => {
    const result = await client.audio.transcriptions.create({ model, file: await file(), response_format: "vtt" });
    expect(typeof result).toBe("string");
    expect(result).toStartWith("WEBVTT");
    expect(result).toMatch(/\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}/);
    if (target === "openai") expect(result).toBe(expected("vtt"));
  });

  test("diarized_json: segments with their speaker, typed transcript.text.segment", async () => {
    const result: any = await client.audio.transcriptions.create({ model, file: await file(), response_format: "diarized_json" });
    expect(result.task).toBe("transcribe");
    expect(typeof result.duration).toBe("number");
    expect(result.segments.length).toBeGreaterThan(0);
    for (const segment of result.segments) {
      expect(segment).toMatchObject({ type: "transcript.text.segment", id: expect.any(String), start: expect.any(Number), end: expect.any(Number), text: expect.any(String), speaker: expect.any(String) });
    }
    if (target === "openai") expect(result).toEqual(JSON.parse(expected("diarized_json")));
    // One voice that the mock does not tell apart: speaker A, as OpenAI labels a speaker it was not introduced to.
    else expect(new Set(result.segments.map((segment: any) => segment.speaker))).toEqual(new Set(["A"]));
  });

  test("verbose_json: language, duration and segments", async () => {
    const result = await client.audio.transcriptions.create({ model, file: await file(), response_format: "verbose_json" });
    expect(typeof result.language).toBe("string");
    expect(result.language.length).toBeGreaterThan(0);
    expect(typeof result.duration).toBe("number");
    expect(Array.isArray(result.segments)).toBe(true);
    expect(result.segments!.length).toBeGreaterThan(0);
    if (target === "openai") expect(result).toEqual(JSON.parse(expected("verbose_json")));
    // The mock reads the duration from the file's own header.
    else expect(result.duration).toBeCloseTo(wavSeconds(wav), 2);
  });
});

test("images.generate with GPT image fields on the demo model: drawn, and each field it ignores named in x-gateway-warnings", async () => {
  const { data, response } = await client.images
    .generate({ model: TARGETS.mock.image, prompt: "a teapot", background: "transparent", output_format: "webp", quality: "standard" })
    .withResponse();
  expect(data.data).toHaveLength(1);
  const warnings = response.headers.get("x-gateway-warnings") ?? "";
  expect(warnings).toContain("background: not supported by the demo image model");
  expect(warnings).toContain("output_format: not supported by the demo image model");
});

describe("transcription fields the gateway does not model", () => {
  const options: Omit<OpenAI.Audio.TranscriptionCreateParamsNonStreaming, "model" | "file"> = {
    response_format: "verbose_json",
    timestamp_granularities: ["word", "segment"],
    include: ["logprobs"],
    chunking_strategy: "auto",
  };

  test("reach an openai upstream in order, repeats included, as the SDK sent them", async () => {
    up.reset();
    await client.audio.transcriptions.create({ model: TARGETS.openai.whisper, file: await toFile(speechWav("hello there"), "a.wav"), ...options });
    const sent = up.requests.at(-1)!.fieldEntries.filter(([name]) => !["model", "response_format"].includes(name));
    expect(sent).toEqual([
      ["timestamp_granularities[]", "word"],
      ["timestamp_granularities[]", "segment"],
      ["include[]", "logprobs"],
      ["chunking_strategy", "auto"],
    ]);
  });

  test("are named once each in the warnings header of the demo model, which ignores them", async () => {
    const { response } = await client.audio.transcriptions
      .create({ model: TARGETS.mock.whisper, file: await toFile(speechWav("hello there"), "a.wav"), ...options })
      .withResponse();
    const warnings = response.headers.get("x-gateway-warnings") ?? "";
    expect(warnings.match(/timestamp_granularities\[\]/g)).toHaveLength(1);
    expect(warnings).toContain("include[]");
    expect(warnings).toContain("chunking_strategy");
  });
});

describe("mock speech", () => {
  test("the WAV's duration and the MP3's size grow with the input's length", async () => {
    const short = "Short.";
    const long = "A much longer sentence, with many more words in it, takes longer to say out loud.";
    const [shortWav, longWav] = [await speakToFile("demo-tts", short, "wav"), await speakToFile("demo-tts", long, "wav")];
    expect(wavSeconds(longWav)).toBeGreaterThan(wavSeconds(shortWav) * 3);
    const [shortMp3, longMp3] = [await speakToFile("demo-tts", short, "mp3"), await speakToFile("demo-tts", long, "mp3")];
    expect(longMp3.length).toBeGreaterThan(shortMp3.length * 3);
  });
});

describe("SDK error classes", () => {
  const rejectionOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as any;
    }
    throw new Error("expected the SDK call to fail");
  };

  test("BadRequestError: speech input of 4097 characters", async () => {
    const error = await rejectionOf(client.audio.speech.create({ model: "demo-tts", input: "a".repeat(4097), voice: "alloy" }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("4096");
  });

  test("AuthenticationError: an unknown key", async () => {
    const error = await rejectionOf(sdkClient("sk-gw-not-a-real-key-000000000000").embeddings.create({ model: "demo-embed", input: "x" }));
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.status).toBe(401);
  });

  test("NotFoundError: an unknown model on embeddings and speech", async () => {
    const embed = await rejectionOf(client.embeddings.create({ model: "no-such-embedder", input: "x" }));
    expect(embed).toBeInstanceOf(OpenAI.NotFoundError);
    const speak = await rejectionOf(client.audio.speech.create({ model: "no-such-voice", input: "x", voice: "alloy" }));
    expect(speak).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("PermissionDeniedError: a key with only the chat permission, on speech and transcription", async () => {
    const user = await adminCreateUser(gw, { email: `chat-only-${crypto.randomUUID().slice(0, 8)}@example.test`, plan: "enterprise", balance: 10 });
    const token = await adminCreateToken(gw, { user_id: user.id, name: "chat only", permissions: ["chat"] });
    const chatOnly = sdkClient(token.key);
    // The key itself is good: chat works.
    const completion = await chatOnly.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices).toHaveLength(1);
    const speak = await rejectionOf(chatOnly.audio.speech.create({ model: "demo-tts", input: "hi", voice: "alloy" }));
    expect(speak).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(speak.status).toBe(403);
    const transcribe = await rejectionOf(chatOnly.audio.transcriptions.create({ model: "demo-transcribe", file: await toFile(wav, "a.wav") }));
    expect(transcribe).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});
