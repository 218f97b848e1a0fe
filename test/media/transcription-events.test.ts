import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { expectError } from "../auth/support.ts";
import { account, expectBooksBalanced, onlyUsageRowOf, usageRows } from "../billing/_inprocess.ts";
import { sleep } from "../helpers/common.ts";
import { createChannel, upstreamTranscriptText } from "../helpers/openai-media-upstream.ts";
import { accountClient, collect, MODALITIES, MODELS, startEventStreamWorld, TRANSCRIPTION_WAV, transcriptionFile, transcriptionForm, type EventStreamWorld } from "./_event-streams.ts";

/**
 * Transcriptions streamed as OpenAI's transcript.text.* events (`stream=true`): what the openai
 * upstream is asked, whisper-1's whole answer (OpenAI's reference: streaming "is not supported
 * for the whisper-1 model and will be ignored"), the demo model's events, and the formats OpenAI's
 * streaming models refuse. What every stream shares is in event-streams.test.ts.
 */

let world: EventStreamWorld;
const WHISPER = "ev-whisper";
beforeAll(async () => {
  world = await startEventStreamWorld();
  await createChannel(world.gw, { name: "whisper", type: "openai", base_url: world.primary.url, api_key: "sk-whisper", models: [], model_map: { [WHISPER]: "whisper-1" } });
  expect((await world.gw.admin("POST", "/v1/admin/prices", { model: WHISPER, ...MODALITIES.transcription.price })).status).toBe(200);
});
afterAll(() => world.close());
beforeEach(() => world.primary.reset());

const START = 10_000_000;
const COST = MODALITIES.transcription.cost.openai;

test("the openai upstream is asked to stream, with the mapped model and the whole file", async () => {
  await collect((await MODALITIES.transcription.sdk(world.client, MODELS.transcription.openai)).events);
  const [sent] = world.primary.requests;
  expect(sent!.fields).toMatchObject({ model: MODELS.transcription.upstream, stream: "true", response_format: "json" });
  expect(sent!.file!.size).toBe(TRANSCRIPTION_WAV.length);
});

test("whisper-1 ignores stream and answers whole: the caller gets that body, as from OpenAI, charged as a whole answer, its usage row unstreamed", async () => {
  const { id, key } = await accountClient(world.gw, START);
  const response = await world.gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: transcriptionForm({ model: WHISPER, stream: "true" }) });
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(await response.json()).toEqual({ text: upstreamTranscriptText("transcribe", { name: "harbour.wav", size: TRANSCRIPTION_WAV.length }) });
  expect(world.primary.requests[0]!.fields).toMatchObject({ model: "whisper-1", stream: "true" });
  const row = await onlyUsageRowOf(world.gw, response);
  expect({ status: row.status, cost: row.cost_micros, stream: row.stream }).toEqual({ status: 200, cost: COST, stream: 0 });
  expect((await account(world.gw, id)).balance_micros).toBe(START - COST);
});

test.each(["false", "true"])("whisper-1, stream=%s: a client that leaves once its whole answer has begun pays for the file (499), as for the whole form", async (stream) => {
  const { id, key } = await accountClient(world.gw, START);
  const begun = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  // The head and half the transcript, then the rest once the client has gone.
  world.primary.setBehavior({
    script: () => {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode('{"text":"Rain fell'));
          begun.resolve();
          await release.promise;
          controller.enqueue(encoder.encode(' on the harbour."}'));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  });
  const client = new AbortController();
  const sent = world.gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: transcriptionForm({ model: WHISPER, stream }), signal: client.signal });
  await begun.promise;
  // Until the gateway has the head (it is only then that the upstream's work is the caller's).
  await sleep(100);
  client.abort();
  await sent.catch(() => {});
  // The hang-up reaches the gateway before the rest of the body does.
  await sleep(100);
  release.resolve();
  const [row, ...others] = await usageRows(world.gw, id);
  expect(others).toEqual([]);
  await expectBooksBalanced(world.gw);
  expect({ status: row!.status, cost: row!.cost_micros, stream: row!.stream }).toEqual({ status: 499, cost: COST, stream: 0 });
  expect((await account(world.gw, id)).balance_micros).toBe(START - COST);
});

test("the demo model's deltas spell the text of its done event, which is the transcript it answers whole", async () => {
  const whole = await world.client.audio.transcriptions.create({ model: MODELS.transcription.mock, file: await transcriptionFile() });
  const { events } = await collect((await MODALITIES.transcription.sdk(world.client, MODELS.transcription.mock)).events);
  const deltas = events.filter((event) => event.type === "transcript.text.delta");
  expect(deltas.length).toBeGreaterThan(1);
  expect(events.at(-1)).toMatchObject({ type: "transcript.text.done", text: whole.text, usage: { type: "tokens" } });
  expect(deltas.map((event) => event.delta).join("")).toBe(whole.text);
});

test("diarized_json from the demo model: a segment event for each of the whole answer's segments, then the text", async () => {
  const whole: any = await world.client.audio.transcriptions.create({ model: MODELS.transcription.mock, file: await transcriptionFile(), response_format: "diarized_json" });
  const stream = await world.client.audio.transcriptions.create({ model: MODELS.transcription.mock, file: await transcriptionFile(), response_format: "diarized_json", stream: true });
  const { events } = await collect(stream);
  expect(events.slice(0, -1)).toEqual(whole.segments);
  expect(events.at(-1)).toMatchObject({ type: "transcript.text.done", text: whole.text });
});

test.each(["srt", "vtt", "verbose_json"])("%s from the demo model as a stream is a 400, as OpenAI's streaming models refuse it; the hold refunded", async (format) => {
  const { id, key } = await accountClient(world.gw, START);
  const response = await world.gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: transcriptionForm({ model: MODELS.transcription.mock, stream: "true", response_format: format }) });
  expect(await expectError(response.clone(), 400, "invalid_request_error")).toContain(`not ${format}`);
  const row = await onlyUsageRowOf(world.gw, response);
  expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 400, cost: 0 });
  expect((await account(world.gw, id)).balance_micros).toBe(START);
});
