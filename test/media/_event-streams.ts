/**
 * The set-up shared by the tests of media answers streamed as events (speech with
 * `stream_format: "sse"`, transcriptions and images with `stream`): a gateway, two loopback
 * OpenAI media upstreams (`primary` behind the high-priority channels, `backup` behind the
 * failover ones), each modality's request through the official SDK and through plain fetch,
 * and the accounts and books checks.
 */
import { expect } from "bun:test";
import OpenAI, { toFile } from "openai";
import { Stream } from "openai/streaming";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, startOpenAiMediaUpstream, STREAM_FIXTURES, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { readFixture } from "../helpers/loopback-upstream.ts";
import { newAccount } from "../billing/_inprocess.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";

export type Target = "mock" | "openai";
export const TARGETS: Target[] = ["mock", "openai"];

/**
 * The models of each modality: the demo mock's, an openai channel's (sent upstream as
 * `upstream`), and one served by `backup` after a `primary` failure.
 */
export const MODELS = {
  speech: { mock: "demo-tts", openai: "ev-tts", upstream: "gpt-4o-mini-tts", failover: "ev-tts-failover" },
  transcription: { mock: "demo-transcribe", openai: "ev-transcribe", upstream: "gpt-4o-transcribe", failover: "ev-transcribe-failover" },
  images: { mock: "demo-image", openai: "ev-image", upstream: "gpt-image-1", failover: "ev-image-failover" },
} as const;
export type ModalityName = keyof typeof MODELS;

/** 1 USD per 1K characters: 1,000 micro-USD a character. */
const SPEECH_MICROS_PER_CHARACTER = 1_000;
export const SPEECH_TEXT = "The harbour lights came on one by one.";
const SPEECH_COST = SPEECH_TEXT.length * SPEECH_MICROS_PER_CHARACTER;

/** 0.6 USD a minute: 10,000 micro-USD a second. */
const TRANSCRIPTION_MICROS_PER_SECOND = 10_000;
/** Three seconds of silence, as a WAV file's header says. */
const TRANSCRIPTION_SECONDS = 3;
export const TRANSCRIPTION_WAV = encodeWav(new Int16Array(TRANSCRIPTION_SECONDS * 8_000), 8_000);
const TRANSCRIPTION_COST = TRANSCRIPTION_SECONDS * TRANSCRIPTION_MICROS_PER_SECOND;

/**
 * Prices of GPT image models' sizes and qualities, and DALL-E's default the demo model makes.
 * Asked for neither, an image is held at the dearest (0.25 USD) and charged at what was made:
 * the recorded stream's 1024x1536 medium, the demo's 1024x1024 standard.
 */
const IMAGE_PRICES = { "1024x1024/standard": 0.02, "1024x1024/medium": 0.04, "1024x1536/medium": 0.06, "1024x1536/high": 0.25 };
export const IMAGE_PROMPT = "A lighthouse on a cliff at dusk";
export const PARTIAL_IMAGES = 2;

/** The multipart body of a transcription of TRANSCRIPTION_WAV with `fields`. */
export function transcriptionForm(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", new Blob([TRANSCRIPTION_WAV as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "harbour.wav");
  return form;
}

/** TRANSCRIPTION_WAV as the SDK uploads a file. */
export const transcriptionFile = () => toFile(TRANSCRIPTION_WAV, "harbour.wav", { type: "audio/wav" });

/** What one modality's streamed request is, and costs, in these tests. */
export interface Modality {
  name: ModalityName;
  /** The type of the event that ends its stream. */
  end: string;
  /** Through the SDK: the events as the SDK parses them, and the response (for its headers). */
  sdk(client: OpenAI, model: string): Promise<{ events: AsyncIterable<any>; response: Response }>;
  /** The same request (path and init), for a test that reads the body itself. */
  request(key: string, model: string): { path: string; init: RequestInit };
  /** The model's price (a POST /v1/admin/prices body without the model). */
  price: Record<string, unknown>;
  /** The stream the openai upstream replays (STREAM_FIXTURES). */
  fixture: string;
  /** What the whole request costs, in micro-USD. */
  cost: Record<Target, number>;
  /** What a client that hangs up after the openai upstream's first event pays (the non-streamed form's rule). */
  hangUpCost: number;
}

/** A JSON POST with an API key. */
const jsonPost = (key: string, path: string, body: unknown) => ({
  path,
  init: { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) },
});

/** Sends `modality`'s request for `model` to the gateway over HTTP; `signal` hangs up. */
export function send(gw: TestGateway, modality: Modality, key: string, model: string, signal?: AbortSignal): Promise<Response> {
  const { path, init } = modality.request(key, model);
  return gw.fetch(path, { ...init, signal });
}

/** The events of an SDK call that answers a Stream, and the response they came in. */
async function withResponse(call: { withResponse(): Promise<{ data: AsyncIterable<any>; response: Response }> }) {
  const { data, response } = await call.withResponse();
  return { events: data, response };
}

export const MODALITIES: Record<ModalityName, Modality> = {
  speech: {
    name: "speech",
    end: "speech.audio.done",
    async sdk(client, model) {
      // The SDK hands speech back as a raw Response; its own SSE parser reads the events.
      const response = await client.audio.speech.create({ model, input: SPEECH_TEXT, voice: "alloy", stream_format: "sse" });
      return { events: Stream.fromSSEResponse(response, new AbortController()), response };
    },
    request: (key, model) => jsonPost(key, "/v1/audio/speech", { model, input: SPEECH_TEXT, stream_format: "sse" }),
    price: { mode: "speech", per_1k_characters: SPEECH_MICROS_PER_CHARACTER / 1_000 },
    fixture: STREAM_FIXTURES.speech,
    cost: { mock: SPEECH_COST, openai: SPEECH_COST },
    // The whole text, as for the audio form: the upstream was asked to speak it, and bills it.
    hangUpCost: SPEECH_COST,
  },
  transcription: {
    name: "transcription",
    end: "transcript.text.done",
    sdk: async (client, model) => withResponse(client.audio.transcriptions.create({ model, file: await transcriptionFile(), stream: true })),
    request: (key, model) => ({
      path: "/v1/audio/transcriptions",
      init: { method: "POST", headers: { authorization: `Bearer ${key}` }, body: transcriptionForm({ model, stream: "true" }) },
    }),
    price: { mode: "transcription", per_minute: (TRANSCRIPTION_MICROS_PER_SECOND * 60) / 1e6 },
    fixture: STREAM_FIXTURES.transcription,
    cost: { mock: TRANSCRIPTION_COST, openai: TRANSCRIPTION_COST },
    // The whole file, as a whole answer whose client leaves once it has begun is charged.
    hangUpCost: TRANSCRIPTION_COST,
  },
  images: {
    name: "images",
    end: "image_generation.completed",
    sdk: (client, model) => withResponse(client.images.generate({ model, prompt: IMAGE_PROMPT, stream: true, partial_images: PARTIAL_IMAGES })),
    request: (key, model) => jsonPost(key, "/v1/images/generations", { model, prompt: IMAGE_PROMPT, stream: true, partial_images: PARTIAL_IMAGES }),
    price: { mode: "image", image_prices: IMAGE_PRICES },
    fixture: STREAM_FIXTURES.images,
    cost: { mock: Math.round(IMAGE_PRICES["1024x1024/standard"] * 1e6), openai: Math.round(IMAGE_PRICES["1024x1536/medium"] * 1e6) },
    // No image had been completed: as a whole answer's client that left before it came, nothing is charged.
    hangUpCost: 0,
  },
};

export interface EventStreamWorld {
  gw: TestGateway;
  primary: MediaUpstream;
  backup: MediaUpstream;
  client: OpenAI;
  close(): Promise<void>;
}

/** A gateway with the demo mock channel, and openai channels on two loopback upstreams, every modality's models priced. */
export async function startEventStreamWorld(): Promise<EventStreamWorld> {
  const gw = await startTestGateway({ strictPricing: true });
  const primary = startOpenAiMediaUpstream();
  const backup = startOpenAiMediaUpstream();
  const models = Object.values(MODELS);
  for (const modality of Object.values(MODALITIES)) {
    const { mock, openai, failover } = MODELS[modality.name];
    for (const model of [mock, openai, failover]) expect((await gw.admin("POST", "/v1/admin/prices", { model, ...modality.price })).status).toBe(200);
  }
  const modelMap = Object.fromEntries(models.map((m) => [m.openai, m.upstream]));
  await createChannel(gw, { name: "primary", type: "openai", base_url: primary.url, api_key: "sk-primary", models: models.map((m) => m.failover), model_map: modelMap, priority: 10 });
  await createChannel(gw, { name: "backup", type: "openai", base_url: backup.url, api_key: "sk-backup", models: models.map((m) => m.failover) });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.demoKey, maxRetries: 0, timeout: 10_000 });
  return {
    gw,
    primary,
    backup,
    client,
    async close() {
      await gw.close();
      await primary.close();
      await backup.close();
    },
  };
}

/** An SDK client for a new account of `micros`; its id, to read its books by. */
export async function accountClient(gw: TestGateway, micros: number): Promise<{ id: string; key: string; client: OpenAI }> {
  const { id, key } = await newAccount(gw, micros);
  return { id, key, client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, timeout: 10_000 }) };
}

/** Every event the SDK yields, until its stream ends or raises; the error it raised, if it did. */
export async function collect(events: AsyncIterable<any>): Promise<{ events: any[]; error: any }> {
  const seen: any[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { events: seen, error };
  }
  return { events: seen, error: null };
}

/** The events of a recorded upstream stream, as the upstream sends them (each block with its blank line). */
export function fixtureBlocks(name: string): string[] {
  return readFixture(name).split(/(?<=\n\n)/).filter((block) => block.trim() !== "");
}

/** An SSE answer that sends `blocks[0]`, then the rest only once `release` settles. */
export function firstThenWait(blocks: string[], release: Promise<unknown>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(blocks[0]!));
      await release;
      for (const block of blocks.slice(1)) controller.enqueue(encoder.encode(block));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** An SSE answer of the given blocks, ended cleanly. */
export function sseAnswer(blocks: string[]): Response {
  return new Response(blocks.join(""), { headers: { "content-type": "text/event-stream" } });
}

/** The body's reads, as text, each as it came: a read that held several events shows them written together. */
export async function readsOf(response: Response): Promise<string[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const reads: string[] = [];
  for (let next = await reader.read(); !next.done; next = await reader.read()) reads.push(decoder.decode(next.value, { stream: true }));
  return reads;
}

/** The `type` of each data line's JSON in an SSE text, in order. */
export function eventTypes(sse: string): string[] {
  return [...sse.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]!).type);
}
