import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { Stream } from "openai/streaming";
import { bytesOf, postJson } from "../helpers/openai-media-upstream.ts";
import { sseFixtureEvents } from "../helpers/loopback-upstream.ts";
import { collect, MODALITIES, MODELS, SPEECH_TEXT, startEventStreamWorld, type EventStreamWorld } from "./_event-streams.ts";

/**
 * Speech as OpenAI's events (`stream_format: "sse"`): what the openai upstream is asked, and
 * the audio the demo voice's events carry. What every stream shares is in event-streams.test.ts.
 */

let world: EventStreamWorld;
beforeAll(async () => {
  world = await startEventStreamWorld();
});
afterAll(() => world.close());
beforeEach(() => world.primary.reset());

/** The audio of speech.audio.delta events, joined in order. */
const audioOf = (events: any[]) => Buffer.concat(events.filter((event) => event.type === "speech.audio.delta").map((event) => Buffer.from(event.audio, "base64")));

test("the openai upstream is asked for events, with the mapped model, and its audio reaches the caller as it sent it", async () => {
  const { events } = await MODALITIES.speech.sdk(world.client, MODELS.speech.openai);
  const { events: seen } = await collect(events);
  expect(world.primary.requests.map((request) => request.body)).toEqual([
    { model: MODELS.speech.upstream, input: SPEECH_TEXT, voice: "alloy", response_format: "mp3", speed: 1, stream_format: "sse" },
  ]);
  const sent = sseFixtureEvents(MODALITIES.speech.fixture).map((event) => JSON.parse(event.data));
  expect(audioOf(seen)).toEqual(audioOf(sent));
});

test.each(["mp3", "wav", "flac"] as const)("the demo voice's events carry the very %s audio its byte stream gives for the same request", async (format) => {
  const request = { model: MODELS.speech.mock, input: "Events and bytes say the same thing.", voice: "alloy", response_format: format };
  const bytes = await bytesOf(await postJson(world.gw, world.gw.demoKey, "/v1/audio/speech", request));
  const response = await world.client.audio.speech.create({ ...request, stream_format: "sse" });
  const { events } = await collect(Stream.fromSSEResponse(response, new AbortController()));
  expect(events.at(-1)).toEqual({ type: "speech.audio.done", usage: expect.objectContaining({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) }) });
  expect(audioOf(events)).toEqual(Buffer.from(bytes));
});

test("stream_format audio stays the raw byte stream", async () => {
  const response = await postJson(world.gw, world.gw.demoKey, "/v1/audio/speech", { model: MODELS.speech.mock, input: "Bytes.", stream_format: "audio" });
  expect(response.headers.get("content-type")).toBe("audio/mpeg");
  expect((await bytesOf(response)).length).toBeGreaterThan(0);
});
