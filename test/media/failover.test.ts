import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { closedPortUrl } from "../helpers/openai-upstream.ts";
import {
  createChannel,
  FAMILIES,
  postJson,
  postUpload,
  priceModel,
  sha256Hex,
  speechWav,
  startOpenAiMediaUpstream,
  usageRowsOf,
  type Family,
  type MediaRequest,
  type MediaUpstream,
} from "../helpers/openai-media-upstream.ts";

/**
 * Failover on the five media endpoint families: per family, a model served by two `openai`
 * channels of different priority. A retryable failure of the first (5xx, 429, a closed port)
 * is served by the second, with one usage row; an upstream 400 is the caller's and final.
 */

let gw: TestGateway;
/** The gateway's clock: a 429 pauses a channel for its Retry-After, which the tests step past. */
let clock = Date.now();
/** `primary` backs the high-priority channels, `backup` the low-priority ones. */
let primary: MediaUpstream;
let backup: MediaUpstream;
const ids = {} as Record<Family, { first: string; second: string; dead: string }>;

const wav = speechWav("failover needs the same file twice");

/** One request of each family for `model`; the caller reads the body. */
const CALL: Record<Family, (model: string) => Promise<Response>> = {
  embeddings: (model) => postJson(gw, gw.demoKey, "/v1/embeddings", { model, input: ["hello", "world"] }),
  rerank: (model) => postJson(gw, gw.demoKey, "/v1/rerank", { model, query: "cats", documents: ["cats sleep", "dogs bark"] }),
  images: (model) => postJson(gw, gw.demoKey, "/v1/images/generations", { model, prompt: "a cat asleep" }),
  speech: (model) => postJson(gw, gw.demoKey, "/v1/audio/speech", { model, input: "The second channel speaks.", response_format: "wav" }),
  transcriptions: (model) => postUpload(gw, gw.demoKey, "/v1/audio/transcriptions", { bytes: wav, name: "failover.wav" }, { model, response_format: "json" }),
};

/** What identifies a request's content: its JSON body, or its fields and file hash. */
const contentOf = (request: MediaRequest) => ({ path: request.path, body: request.body, fields: request.fields, file: request.file?.sha256 ?? null });

beforeAll(async () => {
  primary = startOpenAiMediaUpstream();
  backup = startOpenAiMediaUpstream();
  // The breaker would cool a channel after three failures; each test here should see its own.
  gw = await startTestGateway({ now: () => clock, env: { GATEWAY_BREAKER_FAILURES: "1000" } });
  const dead = await closedPortUrl();
  for (const family of FAMILIES) {
    const model = `fo-${family}`;
    await priceModel(gw, model, family);
    await priceModel(gw, `${model}-dead`, family);
    ids[family] = {
      first: await createChannel(gw, { name: `${family} first`, type: "openai", base_url: primary.url, api_key: "key-first", models: [model], priority: 10 }),
      second: await createChannel(gw, { name: `${family} second`, type: "openai", base_url: backup.url, api_key: "key-second", models: [model, `${model}-dead`], priority: 0 }),
      dead: await createChannel(gw, { name: `${family} dead`, type: "openai", base_url: dead, api_key: "key-dead", models: [`${model}-dead`], priority: 10 }),
    };
  }
});
afterAll(async () => {
  await gw.close();
  await primary.close();
  await backup.close();
});
beforeEach(() => {
  primary.reset();
  backup.reset();
});

/** The response served by the second channel after one failed attempt, with exactly one usage row of status 200. */
async function expectServedBySecond(family: Family, response: Response) {
  expect(response.status).toBe(200);
  expect(response.headers.get("x-gateway-channel")).toBe(ids[family].second);
  expect(response.headers.get("x-gateway-attempts")).toBe("2");
  expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
  expect(backup.requests).toHaveLength(1);
  expect(backup.requests[0]!.headers.authorization).toBe("Bearer key-second");
  const rows = await usageRowsOf(gw, response.headers.get("x-request-id")!);
  expect(rows).toHaveLength(1);
  expect(rows[0].status).toBe(200);
  expect(rows[0].channel_id).toBe(ids[family].second);
}

describe.each(FAMILIES)("%s", (family) => {
  test("the first channel answers 500: served by the second, which gets the same request", async () => {
    primary.failNext(1, 500);
    const response = await CALL[family](`fo-${family}`);
    expect(primary.requests).toHaveLength(1);
    await expectServedBySecond(family, response);
    expect(contentOf(backup.requests[0]!)).toEqual(contentOf(primary.requests[0]!));
    if (family === "transcriptions") expect(backup.requests[0]!.file!.sha256).toBe(sha256Hex(wav));
  });

  test("the first channel answers 429: served by the second", async () => {
    primary.failNext(1, 429, { "retry-after": "3" });
    const response = await CALL[family](`fo-${family}`);
    expect(primary.requests).toHaveLength(1);
    await expectServedBySecond(family, response);
    // For its Retry-After the first channel is skipped, then used again.
    const paused = await CALL[family](`fo-${family}`);
    expect(paused.headers.get("x-gateway-attempts")).toBe("1");
    expect(paused.headers.get("x-gateway-channel")).toBe(ids[family].second);
    await paused.arrayBuffer();
    clock += 3_001;
    const back = await CALL[family](`fo-${family}`);
    expect(back.headers.get("x-gateway-channel")).toBe(ids[family].first);
    await back.arrayBuffer();
    expect(primary.requests).toHaveLength(2);
  });

  test("the first channel's port is closed: served by the second", async () => {
    const response = await CALL[family](`fo-${family}-dead`);
    await expectServedBySecond(family, response);
    expect(primary.requests).toHaveLength(0);
  });

  test("an upstream 400 is final: the caller gets 400 and the second channel is never called", async () => {
    primary.failNext(1, 400);
    const response = await CALL[family](`fo-${family}`);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(400);
    expect(typeof body.error.message).toBe("string");
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(0);
    const rows = await usageRowsOf(gw, response.headers.get("x-request-id")!);
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe(400);
  });
});

test("both channels fail: the caller gets the gateway's 502 after two attempts, and one usage row", async () => {
  primary.failNext(1, 503);
  backup.failNext(1, 502);
  const response = await CALL.embeddings("fo-embeddings");
  expect(response.status).toBe(502);
  expect((await response.json()).error.code).toBe(502);
  expect(primary.requests).toHaveLength(1);
  expect(backup.requests).toHaveLength(1);
  const rows = await usageRowsOf(gw, response.headers.get("x-request-id")!);
  expect(rows).toHaveLength(1);
  expect(rows[0].status).toBe(502);
});
