/**
 * What an OpenAI-compatible transcription answer is billed at: the whole seconds its `usage`
 * says were billed (whisper-1's `{"type": "duration", "seconds": 4}`), within what the file can
 * hold; and a 200 carrying an error object where text was asked for is not a transcript.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { account, expectBooksBalanced, newAccount, usageRows } from "../billing/_inprocess.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";

const MODEL = "oa-transcribe";
/** 0.006 USD a minute: 100 micro-USD a second. */
const MICROS_PER_SECOND = 100;
const START = 1_000_000;

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
let answer: () => Response = () => Response.json({ text: "ok" });

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      return answer();
    },
  });
  gw = await startTestGateway({ strictPricing: true });
  expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, mode: "transcription", per_minute: 0.006 })).status).toBe(200);
  const channel = await gw.admin("POST", "/v1/admin/channels", { name: "stt", type: "openai", base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: "sk-stt", models: [MODEL] });
  expect(channel.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});

/** Transcribes `seconds` of 8 kHz silence; returns the response and the request's charge. */
async function transcribe(seconds: number, responseFormat: string) {
  const { id, key } = await newAccount(gw, START);
  const form = new FormData();
  form.append("model", MODEL);
  form.append("response_format", responseFormat);
  const wav = encodeWav(new Int16Array(Math.round(seconds * 8000)), 8000);
  form.append("file", new Blob([wav as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "speech.wav");
  const response = await gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  const body = await response.text();
  const [row] = await usageRows(gw, id);
  expect((await account(gw, id)).balance_micros).toBe(START - row!.cost_micros);
  await expectBooksBalanced(gw);
  return { status: response.status, body, charged: row!.cost_micros };
}

test("verbose_json: usage's whole seconds (4) are charged, not the duration (3.25 s)", async () => {
  answer = () => Response.json({ task: "transcribe", language: "english", duration: 3.25, text: "hi", segments: [], usage: { type: "duration", seconds: 4 } });
  expect(await transcribe(3.25, "verbose_json")).toMatchObject({ status: 200, charged: 4 * MICROS_PER_SECOND });
});

test("json, which has no duration: usage's seconds are charged instead of the file's", async () => {
  answer = () => Response.json({ text: "hi", usage: { type: "duration", seconds: 4 } });
  expect(await transcribe(3.25, "json")).toMatchObject({ status: 200, charged: 4 * MICROS_PER_SECOND });
});

test("usage counted in tokens (gpt-4o-transcribe) or seconds the file cannot hold: the file's duration is charged", async () => {
  answer = () => Response.json({ text: "hi", usage: { type: "tokens", input_tokens: 40, output_tokens: 3, total_tokens: 43 } });
  expect(await transcribe(3, "json")).toMatchObject({ status: 200, charged: 3 * MICROS_PER_SECOND });
  answer = () => Response.json({ text: "hi", usage: { type: "duration", seconds: 1e9 } });
  expect(await transcribe(3, "json")).toMatchObject({ status: 200, charged: 3 * MICROS_PER_SECOND });
});

test("text asked for, a 200 with an OpenAI error object: a 502, nothing charged, the error's text not passed on", async () => {
  answer = () => Response.json({ error: { message: "The model is overloaded", type: "server_error", code: null } });
  const result = await transcribe(60, "text");
  expect(result).toMatchObject({ status: 502, charged: 0 });
  expect(result.body).not.toContain("overloaded");
  expect(JSON.parse(result.body).error.type).toBeString();
});

test("text in JSON that is not an error object still goes to the caller as it came", async () => {
  answer = () => Response.json({ text: "hello there" });
  expect(await transcribe(2, "srt")).toMatchObject({ status: 200, body: JSON.stringify({ text: "hello there" }), charged: 2 * MICROS_PER_SECOND });
});
