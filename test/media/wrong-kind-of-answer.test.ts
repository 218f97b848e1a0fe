import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createChannel, postJson, postUpload, priceModel, speechWav, startOpenAiMediaUpstream, type Family, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { responseHead, startRawUpstream, type RawUpstream } from "../helpers/raw-upstream.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";

/**
 * Speech and transcription answered 200 with something other than what was asked for (an
 * error object or page, a transcript without text) are the upstream's 502, not charged, and
 * the next channel is tried; audio labelled application/octet-stream still passes, and of a
 * Content-Type sent twice only the first reaches the caller.
 */

let gw: TestGateway;
let healthy: MediaUpstream;
const raws: RawUpstream[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  healthy = startOpenAiMediaUpstream();
});
afterAll(async () => {
  await gw.close();
  await healthy.close();
  await Promise.all(raws.map((raw) => raw.close()));
});

const AUDIO = new Uint8Array(2048).map((_, i) => i & 0xff);
let modelCounter = 0;

/**
 * A fresh model of `family` whose channel answers every request 200 with the header lines
 * `headers` (a name may repeat) and `body`; with `backup`, the healthy upstream serves it next.
 */
async function modelAnswering(family: Family, headers: [string, string][], body: Uint8Array | string, backup = false) {
  const model = `wrong-kind-${++modelCounter}`;
  await priceModel(gw, model, family);
  const bytes = Buffer.from(body);
  const raw = await startRawUpstream((exchange) => {
    const head = responseHead(200, [...headers, ["content-length", String(bytes.length)], ["connection", "close"]]);
    exchange.write(Buffer.concat([Buffer.from(head), bytes]));
    exchange.end();
  });
  raws.push(raw);
  await createChannel(gw, { name: "odd", type: "openai", base_url: `${raw.url}/v1`, api_key: "k", models: [model], priority: 10 });
  const backupId = backup ? await createChannel(gw, { name: "healthy", type: "openai", base_url: healthy.url, api_key: "k", models: [model], priority: 0 }) : null;
  return { model, backupId };
}

const speak = (model: string) => postJson(gw, gw.demoKey, "/v1/audio/speech", { model, input: "Hello there, this is a test." });
const transcribe = (model: string, responseFormat: string) =>
  postUpload(gw, gw.demoKey, "/v1/audio/transcriptions", { bytes: speechWav("hello"), name: "a.wav" }, { model, response_format: responseFormat });

/** A 502 upstream_error with `message`, and its uncharged row. */
async function expectUpstreamFailure(response: Response, message: string) {
  expect(response.status).toBe(502);
  expect((await response.json()).error).toEqual({ message: `Upstream failed: ${message}`, type: "upstream_error", code: 502 });
  expect(await onlyUsageRowOf(gw, response)).toMatchObject({ status: 502, cost_micros: 0 });
}

describe("speech", () => {
  test("a 200 JSON error object is a 502, not audio", async () => {
    const { model } = await modelAnswering("speech", [["content-type", "application/json"]], '{"error":{"message":"quota exceeded","type":"insufficient_quota"}}');
    await expectUpstreamFailure(await speak(model), "upstream answered application/json instead of audio");
  });

  test("a 200 HTML page is a 502", async () => {
    const { model } = await modelAnswering("speech", [["content-type", "text/html; charset=utf-8"]], "<html><body>Gateway Timeout</body></html>");
    await expectUpstreamFailure(await speak(model), "upstream answered text/html instead of audio");
  });

  test("a 200 JSON error object fails over to the next channel", async () => {
    const { model, backupId } = await modelAnswering("speech", [["content-type", "application/json"]], '{"error":{"message":"quota exceeded"}}', true);
    const response = await speak(model);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-channel")).toBe(backupId!);
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
  });

  test("audio labelled application/octet-stream passes, labelled as sent, and is charged", async () => {
    const { model } = await modelAnswering("speech", [["content-type", "application/octet-stream"]], AUDIO);
    const response = await speak(model);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(AUDIO);
    const row = await onlyUsageRowOf(gw, response);
    expect(row.status).toBe(200);
    expect(row.cost_micros).toBeGreaterThan(0);
  });

  test("of a Content-Type sent twice, only the first value reaches the caller", async () => {
    const { model } = await modelAnswering("speech", [["content-type", "audio/mpeg"], ["content-type", "audio/wav"]], AUDIO);
    const response = await speak(model);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(AUDIO);
  });
});

describe("transcription", () => {
  test.each([
    ["json asked, plain text answered", "json", "text/plain; charset=utf-8", "hello world, plain text", "upstream sent a transcript that is not JSON"],
    ["json asked, an HTML error page answered", "json", "text/html", "<h1>503 Service Temporarily Unavailable</h1>", "upstream sent a transcript that is not JSON"],
    ["json asked, JSON without text answered", "json", "application/json", '{"result":"no text field"}', "upstream sent a transcript without text"],
    ["verbose_json asked, JSON without text answered", "verbose_json", "application/json", '{"duration":1.5,"segments":[]}', "upstream sent a transcript without text"],
    ["srt asked, an HTML page answered", "srt", "text/html; charset=utf-8", "<h1>Bad Gateway</h1>", "upstream answered text/html instead of a transcript"],
  ])("%s: a 502, not a 200", async (_, format, contentType, body, message) => {
    const { model } = await modelAnswering("transcriptions", [["content-type", contentType]], body);
    await expectUpstreamFailure(await transcribe(model, format), message);
  });

  test("text asked and answered: passed through as sent", async () => {
    const { model } = await modelAnswering("transcriptions", [["content-type", "text/plain; charset=utf-8"]], "hello world\n");
    const response = await transcribe(model, "text");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("hello world\n");
    expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
  });
});
