import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { embed, embedMany, experimental_generateImage as generateImage, experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe } from "ai";
import { createChannel, isWav, postJson, priceModel, startOpenAiMediaUpstream, upstreamEmbedding, upstreamPromptTokens, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { startWorld, type World } from "../sdk/_support.ts";
import { providersFor } from "./_ai-sdk-support.ts";

/**
 * The AI SDK's embeddings, images, speech and transcription through the openai provider
 * (and Gemini's embeddings through the google provider), against the demo media models and,
 * for embeddings, an openai channel: each provider's schema takes the gateway's answer and
 * gives back the vectors, usage, bytes and timings.
 */

let world: World;
let mediaUp: MediaUpstream;
beforeAll(async () => {
  world = await startWorld();
  mediaUp = startOpenAiMediaUpstream();
  await createChannel(world.gw, { name: "ai sdk embeddings", type: "openai", base_url: mediaUp.url, api_key: "sk-up", models: ["oa-embed"] });
  await priceModel(world.gw, "oa-embed", "embeddings");
});
afterAll(async () => {
  await world.close();
  mediaUp.close();
});

const TEXTS = ["The quick brown fox", "jumps over the lazy dog"];

/** The demo model's vectors for TEXTS as /v1/embeddings gives them. */
async function demoVectors(): Promise<number[][]> {
  const response = await postJson(world.gw, world.key, "/v1/embeddings", { model: "demo-embed", input: TEXTS });
  return (await response.json()).data.map((d: { embedding: number[] }) => d.embedding);
}

describe("embeddings", () => {
  test("openai.embedding on an openai channel: the upstream's vectors as it wrote them (the SDK asks for float), in order, and its token count", async () => {
    const model = providersFor(world).openai.embedding("oa-embed");
    const one = await embed({ model, value: TEXTS[0]!, maxRetries: 0 });
    expect(one.embedding).toEqual(upstreamEmbedding(TEXTS[0]!));
    expect(one.usage.tokens).toBe(upstreamPromptTokens([TEXTS[0]!]));
    const many = await embedMany({ model, values: TEXTS, maxRetries: 0 });
    expect(many.embeddings).toEqual(TEXTS.map((text) => upstreamEmbedding(text)));
    expect(many.usage.tokens).toBe(upstreamPromptTokens(TEXTS));
  });

  test("openai.embedding and google.textEmbedding on the demo model: the vectors /v1/embeddings gives", async () => {
    const expected = await demoVectors();
    const providers = providersFor(world);
    for (const model of [providers.openai.embedding("demo-embed"), providers.google.textEmbedding("demo-embed")]) {
      const many = await embedMany({ model, values: TEXTS, maxRetries: 0 });
      expect(many.embeddings.map((vector) => vector.map(Math.fround))).toEqual(expected.map((vector) => vector.map(Math.fround)));
      const one = await embed({ model, value: TEXTS[1]!, maxRetries: 0 });
      expect(one.embedding.map(Math.fround)).toEqual(expected[1]!.map(Math.fround));
    }
  });
});

describe("images, speech and transcription on the demo models", () => {
  test("generateImage: PNG images, as many as asked", async () => {
    const result = await generateImage({ model: providersFor(world).openai.image("demo-image"), prompt: "a lighthouse at dusk", n: 2, size: "1024x1024", maxRetries: 0 });
    expect(result.images).toHaveLength(2);
    for (const image of result.images) {
      expect(image.mediaType).toBe("image/png");
      expect([...image.uint8Array.slice(1, 4)].map((b) => String.fromCharCode(b)).join("")).toBe("PNG");
    }
    expect(result.warnings).toEqual([]);
  });

  test("generateSpeech, then transcribe what it said: wav audio, and its transcript timed over its length", async () => {
    const openai = providersFor(world).openai;
    const speech = await generateSpeech({ model: openai.speech("demo-tts"), text: "Hello there, how are you today", voice: "alloy", outputFormat: "wav", maxRetries: 0 });
    expect(speech.audio.mediaType).toBe("audio/wav");
    expect(isWav(speech.audio.uint8Array)).toBe(true);
    // Segment timestamps ask for verbose_json, which carries the duration and the segments.
    const transcript = await transcribe({ model: openai.transcription("demo-transcribe"), audio: speech.audio.uint8Array, providerOptions: { openai: { timestampGranularities: ["segment"] } }, maxRetries: 0 });
    expect(transcript.text.length).toBeGreaterThan(0);
    expect(transcript.language).toBe("en");
    expect(transcript.durationInSeconds).toBeGreaterThan(1);
    expect(transcript.segments.at(-1)!.endSecond).toBeCloseTo(transcript.durationInSeconds!, 3);
    expect(transcript.segments.map((segment) => segment.text.trim()).join(" ")).toBe(transcript.text);
  });
});
