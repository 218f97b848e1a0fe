import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import {
  bytesOf,
  createChannel,
  postJson,
  postUpload,
  priceModel,
  sha256Hex,
  speechWav,
  startOpenAiMediaUpstream,
  TINY_PNG_BASE64,
  JPEG_HEAD_BASE64,
  upstreamEmbedding,
  upstreamGptImageFields,
  upstreamImageUrl,
  upstreamPromptTokens,
  upstreamRerankScore,
  upstreamRerankTokens,
  upstreamRevisedPrompt,
  upstreamSpeechBytes,
  upstreamTranscriptBody,
  upstreamTranscriptText,
  usageRowsOf,
  UPSTREAM_SPEECH_TYPES,
  type MediaUpstream,
} from "../helpers/openai-media-upstream.ts";

/**
 * Spec 4.6–4.11 against a channel of type `openai` whose upstream is a loopback
 * OpenAI-compatible server: what the upstream receives (mapped model, fields, file bytes) and
 * what the caller gets back (shapes of 2.7–2.11, served-by headers).
 */

const UPSTREAM_KEY = "sk-upstream-media-secret-0001";
const MAP = { "oa-embed": "text-embedding-3-small", "oa-rerank": "jina-reranker-v2", "oa-image": "dall-e-3", "oa-tts": "tts-1", "oa-whisper": "whisper-1" };

let gw: TestGateway;
let up: MediaUpstream;
let channelId: string;
let key: string;

beforeAll(async () => {
  up = startOpenAiMediaUpstream();
  gw = await startTestGateway();
  key = gw.demoKey;
  channelId = await createChannel(gw, { name: "openai media", type: "openai", base_url: up.url, api_key: UPSTREAM_KEY, models: ["oa-embed-direct"], model_map: MAP });
  await priceModel(gw, "oa-embed", "embeddings");
  await priceModel(gw, "oa-embed-direct", "embeddings");
  await priceModel(gw, "oa-rerank", "rerank");
  await priceModel(gw, "oa-image", "images");
  await priceModel(gw, "oa-tts", "speech");
  await priceModel(gw, "oa-whisper", "transcriptions");
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => up.reset());

function expectServedByChannel(response: Response) {
  expect(response.headers.get("x-gateway-channel")).toBe(channelId);
  expect(response.headers.get("x-gateway-attempts")).toBe("1");
}

function onlyRequest() {
  expect(up.requests).toHaveLength(1);
  const request = up.requests[0]!;
  expect(request.method).toBe("POST");
  expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  return request;
}

const float32Of = (base64: string) => Array.from(new Float32Array(Uint8Array.from(Buffer.from(base64, "base64")).buffer));

describe("embeddings (4.6)", () => {
  test("the mapped model and the inputs reach the upstream; vectors and its prompt_tokens come back as an embedding list", async () => {
    const inputs = ["alpha beta", "gamma delta epsilon"];
    const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed", input: inputs, encoding_format: "float" });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    const body = await response.json();
    expect(body.object).toBe("list");
    expect(body.model).toBe("oa-embed");
    expect(body.data).toEqual(inputs.map((text, index) => ({ object: "embedding", index, embedding: upstreamEmbedding(text) })));
    expect(body.usage).toEqual({ prompt_tokens: upstreamPromptTokens(inputs), total_tokens: upstreamPromptTokens(inputs) });
    const request = onlyRequest();
    expect(request.path).toBe("/v1/embeddings");
    expect(request.body.model).toBe("text-embedding-3-small");
    expect(request.body.input).toEqual(inputs);
  });

  test("OpenAI's user and a field the gateway does not model reach an openai channel as sent, beside the gateway's own", async () => {
    const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed", input: "hi", user: "end-user-7", newer_field: { x: 1 } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest().body).toEqual({ model: "text-embedding-3-small", input: ["hi"], encoding_format: "float", user: "end-user-7", newer_field: { x: 1 } });
  });

  test("a model without a mapping goes upstream under its own ID; a string input is one vector", async () => {
    const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed-direct", input: "solo" });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data).toHaveLength(1);
    expect(body.data[0].embedding).toEqual(upstreamEmbedding("solo"));
    expect(onlyRequest().body.model).toBe("oa-embed-direct");
  });

  test("token IDs (LangChain's default) reach the upstream, one array or several, and are billed on its count", async () => {
    for (const input of [[[9906, 1917], [15339]], [9906, 1917, 0]]) {
      up.reset();
      const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed", input });
      expect(response.status).toBe(200);
      const inputs = typeof input[0] === "number" ? [input as number[]] : (input as number[][]);
      const body = await response.json();
      expect(body.data).toEqual(inputs.map((ids, index) => ({ object: "embedding", index, embedding: upstreamEmbedding(ids) })));
      // A lone token array goes as a batch of one, which OpenAI reads the same way.
      expect(onlyRequest().body.input).toEqual(inputs);
      const [row] = await usageRowsOf(gw, response.headers.get("x-request-id")!);
      expect(row.prompt_tokens).toBe(upstreamPromptTokens(inputs));
    }
  });

  test("encoding_format base64: the little-endian float32 bytes of the upstream's vectors", async () => {
    const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed", input: ["one", "two"], encoding_format: "base64" });
    expect(response.status).toBe(200);
    const body = await response.json();
    for (const [i, text] of ["one", "two"].entries()) {
      expect(typeof body.data[i].embedding).toBe("string");
      expect(float32Of(body.data[i].embedding)).toEqual(upstreamEmbedding(text).map(Math.fround));
    }
  });

  test("an upstream that answers base64 although asked for floats is decoded to numbers", async () => {
    up.setBehavior({ embeddingEncoding: "base64" });
    const response = await postJson(gw, key, "/v1/embeddings", { model: "oa-embed", input: "decoded", encoding_format: "float" });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data[0].embedding).toEqual(upstreamEmbedding("decoded").map(Math.fround));
  });
});

describe("rerank (4.7)", () => {
  const query = "how do cats sleep";
  const documents = ["Dogs bark at night.", "Cats sleep most of the day.", "Cats and dogs sleep a lot, cats more.", "Weather report: sunny."];
  const ranked = documents.map((d, index) => ({ index, score: upstreamRerankScore(query, d) })).sort((a, b) => b.score - a.score);

  test("query, documents and top_n go upstream under the mapped model; results come back highest first", async () => {
    const response = await postJson(gw, key, "/v1/rerank", { model: "oa-rerank", query, documents, top_n: 2, return_documents: true });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    const body = await response.json();
    expect(body.results).toEqual(ranked.slice(0, 2).map(({ index, score }) => ({ index, document: { text: documents[index] }, relevance_score: score })));
    expect(body.meta.tokens_used).toBe(upstreamRerankTokens(query, documents));
    const request = onlyRequest();
    expect(request.path).toBe("/v1/rerank");
    expect(request.body).toMatchObject({ model: "jina-reranker-v2", query, documents, top_n: 2 });
  });

  test("top_n larger than the number of documents: every document is ranked, and the upstream is asked for that many", async () => {
    const response = await postJson(gw, key, "/v1/rerank", { model: "oa-rerank", query, documents, top_n: 10 });
    expect(response.status).toBe(200);
    expect((await response.json()).results.map((r: any) => r.index)).toEqual(ranked.map((r) => r.index));
    expect(onlyRequest().body.top_n).toBe(documents.length);
  });

  test("without top_n every document is ranked; without return_documents no document text", async () => {
    const response = await postJson(gw, key, "/v1/rerank", { model: "oa-rerank", query, documents });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.results.map((r: any) => r.index)).toEqual(ranked.map((r) => r.index));
    for (const result of body.results) expect(result.document).toBeUndefined();
  });
});

describe("images (4.8)", () => {
  test("prompt, n, size, quality and style go upstream; hosted URLs and revised prompts come back", async () => {
    const before = Math.floor(Date.now() / 1000);
    const prompt = "a lighthouse at dusk";
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt, n: 2, size: "1792x1024", quality: "hd", style: "natural" });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    const body = await response.json();
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body.created).toBeGreaterThanOrEqual(before);
    expect(body.data).toEqual([0, 1].map((i) => ({ url: upstreamImageUrl(i), revised_prompt: upstreamRevisedPrompt(prompt) })));
    const request = onlyRequest();
    expect(request.path).toBe("/v1/images/generations");
    expect(request.body).toMatchObject({ model: "dall-e-3", prompt, n: 2, size: "1792x1024", quality: "hd", style: "natural" });
  });

  test("an upstream that sends null for the fields it does not give (revised_prompt, url or b64_json): read as not given", async () => {
    up.setBehavior({ revisedPrompt: "null" });
    const prompt = "a lighthouse at noon";
    const asUrl = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt, n: 2, response_format: "url" });
    expect(asUrl.status).toBe(200);
    expect((await asUrl.json()).data).toEqual([0, 1].map((i) => ({ url: upstreamImageUrl(i), revised_prompt: prompt })));
    const asBytes = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt, response_format: "b64_json" });
    expect(asBytes.status).toBe(200);
    expect((await asBytes.json()).data).toEqual([{ b64_json: TINY_PNG_BASE64, revised_prompt: prompt }]);
  });

  test("an upstream that gives no revised_prompt (DALL-E 2, GPT image models): each image's revised_prompt is the caller's prompt", async () => {
    up.setBehavior({ revisedPrompt: false });
    const prompt = "a lighthouse at dawn";
    for (const response_format of ["url", "b64_json"]) {
      const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt, n: 2, response_format });
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body.data.map((image: any) => image.revised_prompt)).toEqual([prompt, prompt]);
    }
  });

  test("base64 images from the upstream, no response_format asked: a data:image/png;base64 URL (the spec's url) and the b64_json a GPT image model's caller reads", async () => {
    up.setBehavior({ imageFormat: "b64_json" });
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt: "a red square" });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data).toEqual([{ url: `data:image/png;base64,${TINY_PNG_BASE64}`, b64_json: TINY_PNG_BASE64, revised_prompt: upstreamRevisedPrompt("a red square") }]);
  });

  test("the OpenAI SDK's own GPT image example reads b64_json, and the answer keeps the upstream's usage, size, quality, output_format and background", async () => {
    up.setBehavior({ imageFormat: "b64_json" });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const result = await client.images.generate({ model: "oa-image", prompt: "a lighthouse", background: "transparent" });
    expect(result.data?.[0]?.b64_json).toBe(TINY_PNG_BASE64);
    const { background, output_format, quality, size, usage } = result;
    expect({ background, output_format, quality, size, usage } as Record<string, unknown>).toEqual(upstreamGptImageFields({ background: "transparent" }));
  });

  test("response_format url with bytes from the upstream: the data URL only", async () => {
    up.setBehavior({ imageFormat: "b64_json" });
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt: "a red square", response_format: "url" });
    expect((await response.json()).data).toEqual([{ url: `data:image/png;base64,${TINY_PNG_BASE64}`, revised_prompt: upstreamRevisedPrompt("a red square") }]);
  });

  test("OpenAI's user and a prompt of 32,000 characters (GPT image models' limit) reach the upstream; 32,001 is a 400", async () => {
    const prompt = "p".repeat(32_000);
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt, user: "end-user-7" });
    expect(response.status).toBe(200);
    expect(onlyRequest().body).toMatchObject({ prompt, user: "end-user-7" });
    const tooLong = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt: prompt + "p" });
    expect(tooLong.status).toBe(400);
  });

  test("GPT image models' fields: quality high, size auto and the fields the gateway does not model reach the upstream; JPEG bytes come back as image/jpeg", async () => {
    up.setBehavior({ imageFormat: "b64_json" });
    const gptImage = { quality: "high", size: "auto", background: "transparent", output_format: "jpeg", output_compression: 80, moderation: "low" };
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt: "a kite", ...gptImage });
    expect(response.status).toBe(200);
    expect((await response.json()).data[0].url).toBe(`data:image/jpeg;base64,${JPEG_HEAD_BASE64}`);
    expect(onlyRequest().body).toMatchObject({ model: "dall-e-3", prompt: "a kite", ...gptImage });
  });

  test("response_format b64_json is asked of the upstream and its base64 comes back as b64_json", async () => {
    const response = await postJson(gw, key, "/v1/images/generations", { model: "oa-image", prompt: "a blue circle", response_format: "b64_json" });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data).toEqual([{ b64_json: TINY_PNG_BASE64, revised_prompt: upstreamRevisedPrompt("a blue circle") }]);
    expect(onlyRequest().body.response_format).toBe("b64_json");
  });

  test("size, quality, style and response_format the caller left out (or sent as null) are not sent: GPT image models refuse response_format and style, and pick size and quality themselves", async () => {
    for (const body of [{ model: "oa-image", prompt: "a gpt-image prompt" }, { model: "oa-image", prompt: "a gpt-image prompt", quality: null, style: null, response_format: null, n: null, size: null }]) {
      up.reset();
      up.setBehavior({ imageFormat: "b64_json" });
      const response = await postJson(gw, key, "/v1/images/generations", body);
      expect(response.status).toBe(200);
      const sent = onlyRequest().body;
      expect(Object.keys(sent).sort()).toEqual(["model", "n", "prompt"]);
      expect(sent).toMatchObject({ n: 1 });
    }
  });
});

describe("speech (4.9)", () => {
  test("input, voice, format and speed go upstream; MP3 by default with its bytes and Content-Type", async () => {
    const input = "Hello from the loopback voice.";
    const response = await postJson(gw, key, "/v1/audio/speech", { model: "oa-tts", input, voice: "nova", speed: 1.25 });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    expect(sha256Hex(await bytesOf(response))).toBe(sha256Hex(upstreamSpeechBytes(input, "mp3")));
    const request = onlyRequest();
    expect(request.path).toBe("/v1/audio/speech");
    expect(request.body).toEqual({ model: "tts-1", input, voice: "nova", response_format: "mp3", speed: 1.25 });
  });

  test("OpenAI's newer voices (marin, cedar), a custom voice ({id}), another server's voice name and a gpt-4o-mini-tts caller's instructions go upstream", async () => {
    for (const voice of ["marin", "cedar", { id: "voice_1234" }, "af_heart"]) {
      up.reset();
      const input = `Spoken by ${JSON.stringify(voice)}.`;
      const response = await postJson(gw, key, "/v1/audio/speech", { model: "oa-tts", input, voice, instructions: "Speak calmly.", stream_format: "audio" });
      expect(response.status).toBe(200);
      await bytesOf(response);
      expect(onlyRequest().body).toEqual({ model: "tts-1", input, voice, response_format: "mp3", speed: 1, instructions: "Speak calmly." });
    }
  });

  test("fields the gateway does not model (a newer API's options) reach the upstream as sent, as an image request's do", async () => {
    const response = await postJson(gw, key, "/v1/audio/speech", { model: "oa-tts", input: "Hi.", voice: "alloy", loudness: { target: -16 }, watermark: false });
    expect(response.status).toBe(200);
    await bytesOf(response);
    expect(onlyRequest().body).toEqual({ model: "tts-1", input: "Hi.", voice: "alloy", response_format: "mp3", speed: 1, loudness: { target: -16 }, watermark: false });
  });

  test.each(["wav", "flac", "opus", "aac", "pcm"])("%s: the upstream's Content-Type and bytes pass through", async (format) => {
    const input = `Speaking ${format} now.`;
    const response = await postJson(gw, key, "/v1/audio/speech", { model: "oa-tts", input, response_format: format });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(UPSTREAM_SPEECH_TYPES[format]!);
    expect(sha256Hex(await bytesOf(response))).toBe(sha256Hex(upstreamSpeechBytes(input, format)));
    expect(onlyRequest().body.response_format).toBe(format);
  });

  test("the audio streams: the caller has the first chunk before the upstream has sent the last", async () => {
    up.setBehavior({ speechChunks: 4, speechChunkDelayMs: 150 });
    const input = "A sentence long enough to be cut into several chunks of audio for streaming.";
    const response = await postJson(gw, key, "/v1/audio/speech", { model: "oa-tts", input, response_format: "wav" });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(first.value!.length).toBeGreaterThan(0);
    expect(up.speech.chunksTotal).toBe(4);
    expect(up.speech.chunksSent).toBeLessThan(4);
    const parts = [first.value!];
    for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value);
    expect(up.speech.chunksSent).toBe(4);
    expect(sha256Hex(Buffer.concat(parts))).toBe(sha256Hex(upstreamSpeechBytes(input, "wav")));
    const rows = await usageRowsOf(gw, response.headers.get("x-request-id")!);
    expect(rows.map((r) => r.status)).toEqual([200]);
  });
});

describe("transcriptions and translations (4.10, 4.11)", () => {
  const wav = speechWav("the quick brown fox jumps over the lazy dog");
  const file = { bytes: wav, name: "clip.wav", type: "audio/wav" };

  test("a text field named file beside the file part is not sent on: the upstream gets one file", async () => {
    const response = await postUpload(gw, key, "/v1/audio/transcriptions", file, { model: "oa-whisper", file: "not the audio", chunking_strategy: "auto" });
    expect(response.status).toBe(200);
    const request = onlyRequest();
    expect(request.fieldEntries.map(([name]) => name)).toEqual(["model", "response_format", "chunking_strategy"]);
    expect(request.file?.sha256).toBe(sha256Hex(wav));
  });

  test("the file arrives byte for byte with model, response_format, language, temperature and prompt", async () => {
    const response = await postUpload(gw, key, "/v1/audio/transcriptions", file, { model: "oa-whisper", response_format: "json", language: "en", temperature: "0.3", prompt: "Foxes." });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    expect(await response.json()).toEqual({ text: upstreamTranscriptText("transcribe", { name: "clip.wav", size: wav.length }) });
    const request = onlyRequest();
    expect(request.path).toBe("/v1/audio/transcriptions");
    expect(request.headers["content-type"]).toStartWith("multipart/form-data; boundary=");
    expect(request.fields).toEqual({ model: "whisper-1", response_format: "json", language: "en", temperature: "0.3", prompt: "Foxes." });
    expect(request.file).toEqual({ name: "clip.wav", type: "audio/wav", size: wav.length, sha256: sha256Hex(wav) });
  });

  test.each(["json", "text", "srt", "verbose_json", "vtt", "diarized_json"])("transcription %s: the upstream's body and Content-Type pass through", async (format) => {
    const response = await postUpload(gw, key, "/v1/audio/transcriptions", file, { model: "oa-whisper", response_format: format });
    expect(response.status).toBe(200);
    const expected = upstreamTranscriptBody(upstreamTranscriptText("transcribe", { name: "clip.wav", size: wav.length }), format, "transcribe");
    expect(response.headers.get("content-type")).toBe(expected.contentType);
    const text = await response.text();
    expect(text).toBe(expected.body);
    if (format === "srt") expect(text).toStartWith("1\n00:00:00,000 --> ");
    if (format === "vtt") expect(text).toStartWith("WEBVTT");
    if (format === "verbose_json") expect(Object.keys(JSON.parse(text))).toEqual(expect.arrayContaining(["language", "duration", "segments", "text"]));
    expect(onlyRequest().fields.response_format).toBe(format);
  });

  test("translation diarized_json (a transcription's format) is a 400 naming response_format, and nothing is sent", async () => {
    const response = await postUpload(gw, key, "/v1/audio/translations", file, { model: "oa-whisper", response_format: "diarized_json" });
    expect(response.status).toBe(400);
    expect((await response.json()).error.param).toBe("response_format");
    expect(up.requests).toHaveLength(0);
  });

  test("speaker references of gpt-4o-transcribe-diarize (four of about 0.9 MB each) reach the upstream; fields past 4 MB together are a 413", async () => {
    const reference = `data:audio/wav;base64,${"A".repeat(900_000)}`;
    const fields: [string, string][] = [["model", "oa-whisper"], ["response_format", "diarized_json"], ...["agent", "customer", "a", "b"].flatMap((name): [string, string][] => [["known_speaker_names[]", name], ["known_speaker_references[]", reference]])];
    const response = await postUpload(gw, key, "/v1/audio/transcriptions", file, fields);
    expect(response.status).toBe(200);
    const sent = onlyRequest().fieldEntries.filter(([name]) => name === "known_speaker_references[]");
    expect(sent.map(([, value]) => value.length)).toEqual([reference.length, reference.length, reference.length, reference.length]);
    const tooMuch = await postUpload(gw, key, "/v1/audio/transcriptions", file, [...fields, ["known_speaker_references[]", reference]]);
    expect(tooMuch.status).toBe(413);
  });

  test.each(["json", "text", "srt", "verbose_json", "vtt"])("translation %s: sent to /audio/translations, the upstream's answer passes through", async (format) => {
    const response = await postUpload(gw, key, "/v1/audio/translations", file, { model: "oa-whisper", response_format: format, temperature: "0" });
    expect(response.status).toBe(200);
    expectServedByChannel(response);
    const expected = upstreamTranscriptBody(upstreamTranscriptText("translate", { name: "clip.wav", size: wav.length }), format, "translate");
    expect(response.headers.get("content-type")).toBe(expected.contentType);
    expect(await response.text()).toBe(expected.body);
    const request = onlyRequest();
    expect(request.path).toBe("/v1/audio/translations");
    expect(request.fields).toMatchObject({ model: "whisper-1", response_format: format, temperature: "0" });
    expect(request.file!.sha256).toBe(sha256Hex(wav));
  });
});
