import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { TaskType } from "@google/generative-ai";
import { EMBEDDING_KINDS, EMBEDDING_MODELS, expectedVectors, legacyModel, startEmbeddingWorld, type EmbeddingKind, type EmbeddingWorld } from "./_legacy-support.ts";

/**
 * Google's legacy SDK's embedContent (POST {model}:embedContent, one content) and
 * batchEmbedContents (each request naming `models/{model}` itself) on the channels that embed:
 * openai, gemini (sent on as batchEmbedContents) and the mock. The vectors are the upstream's.
 */

let world: EmbeddingWorld;
beforeAll(async () => {
  world = await startEmbeddingWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

describe.each(EMBEDDING_KINDS.map((kind) => [kind]))("%s channel", (kind: EmbeddingKind) => {
  const model = () => legacyModel(world, EMBEDDING_MODELS[kind]);

  test("embedContent of a string: its vector", async () => {
    const { embedding } = await model().embedContent("The quick brown fox");
    expect(embedding.values).toEqual((await expectedVectors(world, kind, ["The quick brown fox"]))[0]!);
  });

  test("batchEmbedContents: a vector per request, in order; taskType does not stop it", async () => {
    const texts = ["alpha", "beta gamma"];
    const { embeddings } = await model().batchEmbedContents({
      requests: texts.map((text) => ({ content: { role: "user", parts: [{ text }] }, taskType: TaskType.RETRIEVAL_DOCUMENT })),
    });
    expect(embeddings.map((embedding) => embedding.values)).toEqual(await expectedVectors(world, kind, texts));
    if (kind === "gemini") {
      const sent = world.upstreams.gemini.requests.at(-1)!;
      expect(sent.action).toBe("batchEmbedContents");
      expect(sent.body.requests.map((request: any) => request.model)).toEqual(texts.map(() => `models/${EMBEDDING_MODELS.gemini}`));
    }
  });
});
