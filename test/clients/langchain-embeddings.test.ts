import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { EMBEDDING_KINDS, EMBEDDING_MODELS, expectedVectors, openAiEmbeddings, startEmbeddingWorld, type EmbeddingKind, type EmbeddingWorld } from "./_legacy-support.ts";

/**
 * LangChain's OpenAIEmbeddings (configuration.baseURL the gateway's /v1) on the channels that
 * embed: openai, gemini (sent on as batchEmbedContents) and the mock. The openai SDK under it
 * asks for base64 unless told otherwise, which the gateway answers as OpenAI does, float32
 * little-endian: the vectors are the upstream's at float32 precision.
 */

let world: EmbeddingWorld;
beforeAll(async () => {
  world = await startEmbeddingWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The vectors as float32, what a base64 answer carries. */
const asFloat32 = (vectors: number[][]) => vectors.map((vector) => vector.map(Math.fround));

describe.each(EMBEDDING_KINDS.map((kind) => [kind]))("%s channel", (kind: EmbeddingKind) => {
  test("embedDocuments and embedQuery: the upstream's vectors, in order", async () => {
    const embeddings = openAiEmbeddings(world, EMBEDDING_MODELS[kind]);
    const texts = ["The quick brown fox", "jumps over the lazy dog"];
    const expected = asFloat32(await expectedVectors(world, kind, texts));
    expect(await embeddings.embedDocuments(texts)).toEqual(expected);
    expect(await embeddings.embedQuery(texts[1]!)).toEqual(expected[1]!);
  });
});

test("dimensions reaches the model: the mock's vectors at the asked size, and an openai upstream asked for it", async () => {
  expect((await openAiEmbeddings(world, EMBEDDING_MODELS.mock, { dimensions: 16 }).embedQuery("hello")).length).toBe(16);
  await openAiEmbeddings(world, EMBEDDING_MODELS.openai, { dimensions: 4 }).embedQuery("hello");
  expect(world.media.requests.at(-1)!.body).toMatchObject({ model: EMBEDDING_MODELS.openai, input: ["hello"], dimensions: 4 });
});
