import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson, priceModel, startOpenAiMediaUpstream, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { responseHead, stalledError, startRawUpstream, type RawExchange, type RawUpstream } from "../helpers/raw-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";
import { createJsonLogger } from "../../src/lib/logger.ts";

/**
 * Speech audio that does not come: the caller is answered only once the first chunk of audio
 * has, so a head followed by silence is a 504 JSON error (or the next channel's audio); audio
 * that stalls midway ends cut short after the stream idle timeout, uncharged, with the
 * upstream's connection closed and one JSON log line instead of a runtime stack trace.
 */

const IDLE_MS = 200;
let gw: TestGateway;
let healthy: MediaUpstream;
const raws: RawUpstream[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway({
    env: { GATEWAY_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS), GATEWAY_UPSTREAM_TIMEOUT_MS: "4000" },
    log: createJsonLogger((line) => logLines.push(line), Date.now),
  });
  healthy = startOpenAiMediaUpstream();
});
afterAll(async () => {
  await gw.close();
  await healthy.close();
  await Promise.all(raws.map((raw) => raw.close()));
});

const AUDIO_HEAD = responseHead(200, { "content-type": "audio/mpeg", "transfer-encoding": "chunked" });
/** One chunk of chunked transfer encoding. */
const chunkOf = (bytes: Uint8Array) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);

let modelCounter = 0;

/** A fresh speech model served by a raw upstream answering `answer`, and optionally by the healthy upstream after it. */
async function speechModel(answer: (exchange: RawExchange) => void, backup: boolean) {
  const model = `speech-body-${++modelCounter}`;
  await priceModel(gw, model, "speech");
  const raw = await startRawUpstream(answer);
  raws.push(raw);
  await createChannel(gw, { name: "misbehaving", type: "openai", base_url: `${raw.url}/v1`, api_key: "k", models: [model], priority: 10 });
  const backupId = backup ? await createChannel(gw, { name: "healthy", type: "openai", base_url: healthy.url, api_key: "k", models: [model], priority: 0 }) : null;
  return { model, raw, backupId };
}

const speak = (model: string) => postJson(gw, gw.demoKey, "/v1/audio/speech", { model, input: "Hello there, this is a test." });

const demoBalance = async () =>
  (await gw.database.db.selectFrom("users").select("balance_micros").where("email", "=", "demo@gateway.local").executeTakeFirstOrThrow()).balance_micros;

test("a head and then no audio is a 504 JSON error, not a 200 the gateway resets", async () => {
  const { model, raw } = await speechModel((exchange) => exchange.write(AUDIO_HEAD), false);
  const before = await demoBalance();
  const response = await speak(model);
  expect(response.status).toBe(504);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect((await response.json()).error).toEqual(stalledError(IDLE_MS));
  await raw.exchanges[0]!.whenClosed;
  expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 504, cost_micros: 0 });
  expect(await demoBalance()).toBe(before);
});

test("a head and then no audio fails over to the next channel, whose audio the caller gets", async () => {
  const { model, raw, backupId } = await speechModel((exchange) => exchange.write(AUDIO_HEAD), true);
  const response = await speak(model);
  expect(response.status).toBe(200);
  await raw.exchanges[0]!.whenClosed;
  expect(response.headers.get("x-gateway-attempts")).toBe("2");
  expect(response.headers.get("x-gateway-channel")).toBe(backupId!);
  expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
  expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 200, channel_id: backupId });
});

test("a 200 with an empty body is a 502: the upstream sent no audio", async () => {
  const { model } = await speechModel((exchange) => {
    exchange.write(responseHead(200, { "content-type": "audio/mpeg", "content-length": "0" }));
  }, false);
  const response = await speak(model);
  expect(response.status).toBe(502);
  expect((await response.json()).error.message).toBe("Upstream failed: upstream sent no audio");
  expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
});

test("audio that stalls midway ends cut short after the idle timeout: 502, not charged, upstream closed, one JSON log line", async () => {
  const audio = new Uint8Array(4096).fill(0x55);
  const { model, raw } = await speechModel((exchange) => exchange.write(Buffer.concat([Buffer.from(AUDIO_HEAD), chunkOf(audio)])), false);
  const before = await demoBalance();
  logLines.length = 0;
  const response = await speak(model);
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  let received = 0;
  const failure = await (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return null;
      received += value.length;
    }
  })().catch((error: unknown) => error);
  // The audio that came reached the caller; then the body was cut off, not ended as if whole.
  expect(received).toBe(audio.length);
  expect(failure).toBeInstanceOf(Error);
  await raw.exchanges[0]!.whenClosed;
  expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
  expect(await demoBalance()).toBe(before);
  const logged = logLines.map((line) => JSON.parse(line));
  expect(logged).toEqual([
    expect.objectContaining({
      level: "warn",
      message: "upstream body failed mid-stream",
      request_id: response.headers.get("x-request-id"),
      reason: `the upstream's answer stalled: nothing came for ${IDLE_MS} ms`,
    }),
  ]);
});
