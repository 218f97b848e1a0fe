import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { createChannel, postUpload, priceModel, speechWav, startOpenAiMediaUpstream, upstreamEmbedding, upstreamTranscriptText, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { responseHead, startRawUpstream, type RawExchange, type RawUpstream } from "../helpers/raw-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";

/**
 * GATEWAY_MAX_UPSTREAM_BODY_BYTES bounds an answer read whole (not streamed): one larger than
 * the limit, whether its head says so (Content-Length) or not (chunked), has reached no
 * caller yet, so it is a failure of that channel like a malformed body: the next channel
 * serves, or the caller gets a 502 naming the limit, with one usage row, nothing charged and
 * no hold left open. A body just under the limit is served as it was sent.
 */

const LIMIT = 64 * 1024;
const TOO_LARGE = {
  message: `Upstream failed: the upstream's answer is larger than GATEWAY_MAX_UPSTREAM_BODY_BYTES (${LIMIT} bytes)`,
  type: "upstream_error",
  code: 502,
};

let gw: TestGateway;
let healthyChat: OpenAiUpstream;
let healthyMedia: MediaUpstream;
const raws: RawUpstream[] = [];

beforeAll(async () => {
  // The idle limit is far above what a test takes: a body the gateway waited on would show as a 504.
  gw = await startTestGateway({
    env: { GATEWAY_MAX_UPSTREAM_BODY_BYTES: String(LIMIT), GATEWAY_STREAM_IDLE_TIMEOUT_MS: "20000", GATEWAY_BREAKER_FAILURES: "1000" },
  });
  healthyChat = await startOpenAiUpstream();
  healthyMedia = startOpenAiMediaUpstream();
});
afterAll(async () => {
  await gw.close();
  await healthyChat.close();
  await healthyMedia.close();
  await Promise.all(raws.map((raw) => raw.close()));
});

/** `json` as JSON text of exactly `size` bytes, made up with a `padding` field (ASCII, so characters are bytes). */
function paddedJson(json: object, size: number): string {
  const bare = JSON.stringify({ ...json, padding: "" }).length;
  return JSON.stringify({ ...json, padding: "p".repeat(size - bare) });
}

/** Writes a whole 200 answer of `body`: its head states its length, or it is sent chunked (8 KiB chunks) without one. */
const FRAMINGS: Record<string, (exchange: RawExchange, body: string) => void> = {
  "with a Content-Length": (exchange, body) => {
    exchange.write(responseHead(200, { "content-type": "application/json", "content-length": String(body.length) }) + body);
  },
  "chunked, without a Content-Length": (exchange, body) => {
    exchange.write(responseHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" }));
    for (let at = 0; at < body.length; at += 8192) {
      const piece = body.slice(at, at + 8192);
      exchange.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    }
    exchange.write("0\r\n\r\n");
  },
};

/** An endpoint answered by a body read whole: its request, its upstream answer, and what of it the caller must get. */
interface Endpoint {
  family: "chat" | "embeddings" | "transcriptions";
  call(model: string): Promise<Response>;
  answer: object;
  /** What the caller's body must hold when `answer` was served. */
  served(body: any): void;
  backupUrl(): string;
  /** What the caller's body must hold when the healthy backup served. */
  servedByBackup(body: any): void;
}

const wav = speechWav("a short clip to transcribe");

const post = (path: string, body: unknown) =>
  gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });

const ENDPOINTS: Endpoint[] = [
  {
    family: "chat",
    call: (model) => post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] }),
    answer: jsonFixture("openai-chat-completion.json"),
    served: (body) => expect(body.choices[0].message.content).toBe("Hello from the loopback upstream. How can I help?"),
    backupUrl: () => healthyChat.url,
    servedByBackup: (body) => expect(body.choices[0].message.content).toBe("Hello from the loopback upstream. How can I help?"),
  },
  {
    family: "embeddings",
    call: (model) => post("/v1/embeddings", { model, input: "hello" }),
    answer: { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.5, -0.25] }], usage: { prompt_tokens: 3, total_tokens: 3 } },
    served: (body) => expect(body.data[0].embedding).toEqual([0.5, -0.25]),
    backupUrl: () => healthyMedia.url,
    servedByBackup: (body) => expect(body.data[0].embedding).toEqual(upstreamEmbedding("hello")),
  },
  {
    family: "transcriptions",
    call: (model) => postUpload(gw, gw.demoKey, "/v1/audio/transcriptions", { bytes: wav, name: "bound.wav" }, { model, response_format: "json" }),
    answer: { text: "Three seconds of tones." },
    served: (body) => expect(body.text).toBe("Three seconds of tones."),
    backupUrl: () => healthyMedia.url,
    servedByBackup: (body) => expect(body.text).toBe(upstreamTranscriptText("transcribe", { name: "bound.wav", size: wav.length })),
  },
];

let modelCounter = 0;

/** A fresh model of `endpoint` served first by a raw upstream answering `answer`, then, with `backup`, by a healthy one. */
async function modelWith(endpoint: Endpoint, answer: (exchange: RawExchange) => void, backup: boolean) {
  const model = `bounded-${endpoint.family}-${++modelCounter}`;
  if (endpoint.family !== "chat") await priceModel(gw, model, endpoint.family);
  const raw = await startRawUpstream(answer);
  raws.push(raw);
  const primaryId = await createChannel(gw, { name: "too large", type: "openai", base_url: `${raw.url}/v1`, api_key: "k", models: [model], priority: 10 });
  const backupId = backup ? await createChannel(gw, { name: "healthy", type: "openai", base_url: endpoint.backupUrl(), api_key: "k", models: [model], priority: 0 }) : null;
  return { model, raw, primaryId, backupId };
}

for (const endpoint of ENDPOINTS) {
  describe(`${endpoint.family}: an answer read whole`, () => {
    for (const [framing, write] of Object.entries(FRAMINGS)) {
      test(`${framing}, past the limit: the next channel serves`, async () => {
        const { model, raw, backupId } = await modelWith(endpoint, (exchange) => write(exchange, paddedJson(endpoint.answer, LIMIT + 1024)), true);
        const response = await endpoint.call(model);
        expect(response.status).toBe(200);
        expect(response.headers.get("x-gateway-channel")).toBe(backupId!);
        expect(response.headers.get("x-gateway-attempts")).toBe("2");
        endpoint.servedByBackup(await response.json());
        expect(raw.exchanges).toHaveLength(1);
        expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 200, channel_id: backupId });
      });

      test(`${framing}, past the limit, on the only channel: a 502 naming the limit, not charged`, async () => {
        const { model } = await modelWith(endpoint, (exchange) => write(exchange, paddedJson(endpoint.answer, LIMIT + 1024)), false);
        const response = await endpoint.call(model);
        expect(response.status).toBe(502);
        expect((await response.json()).error).toEqual(TOO_LARGE);
        expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
      });

      test(`${framing}, just under the limit: served as sent`, async () => {
        const body = paddedJson(endpoint.answer, LIMIT - 1024);
        const { model, primaryId } = await modelWith(endpoint, (exchange) => write(exchange, body), true);
        const response = await endpoint.call(model);
        expect(response.status).toBe(200);
        expect(response.headers.get("x-gateway-channel")).toBe(primaryId);
        const served = await response.json();
        endpoint.served(served);
        // A same-format chat caller, and a transcript, get the upstream's body as it came, padding and all.
        if (endpoint.family !== "embeddings") expect(served.padding).toBe(JSON.parse(body).padding);
        expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 200, channel_id: primaryId });
      });
    }
  });
}

describe("the gateway lets go of an answer past the limit without waiting for it", () => {
  const chat = ENDPOINTS[0]!;

  test("a Content-Length of 10 GB is refused before any of the body is read, and its connection closed", async () => {
    const { model, raw } = await modelWith(chat, (exchange) => exchange.write(responseHead(200, { "content-type": "application/json", "content-length": String(10 * 1024 ** 3) }) + '{"id":'), false);
    const response = await chat.call(model);
    expect(response.status).toBe(502);
    expect((await response.json()).error).toEqual(TOO_LARGE);
    await raw.exchanges[0]!.whenClosed;
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });

  test("a compressed body is counted as it inflates: a small Content-Length of gzip says nothing of its size", async () => {
    const gzipped = gzipSync(paddedJson(chat.answer, LIMIT + 1024));
    expect(gzipped.length).toBeLessThan(LIMIT / 8);
    const head = responseHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(gzipped.length) });
    const { model } = await modelWith(chat, (exchange) => exchange.write(Buffer.concat([Buffer.from(head, "latin1"), gzipped])), false);
    const response = await chat.call(model);
    expect(response.status).toBe(502);
    expect((await response.json()).error).toEqual(TOO_LARGE);
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });

  test("a chunked body that never ends is given up once it passes the limit, and its connection closed", async () => {
    let sent = 0;
    const { model, raw } = await modelWith(
      chat,
      async (exchange) => {
        exchange.write(responseHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" }) + '7\r\n{"id":"\r\n');
        // Bounded all the same: at most 64 times the limit, should the gateway keep reading.
        const piece = "x".repeat(4096);
        while (!exchange.closed && sent < 64 * LIMIT) {
          exchange.write(`1000\r\n${piece}\r\n`);
          sent += piece.length;
          await Bun.sleep(1);
        }
      },
      false,
    );
    const response = await chat.call(model);
    expect(response.status).toBe(502);
    expect((await response.json()).error).toEqual(TOO_LARGE);
    await raw.exchanges[0]!.whenClosed;
    expect(sent).toBeLessThan(64 * LIMIT);
    expect((await onlyUsageRowOf(gw, response)).status).toBe(502);
  });
});
