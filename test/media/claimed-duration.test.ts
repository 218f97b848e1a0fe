/**
 * Transcription holds and bills the duration an audio header states. A header that claims more
 * than the file's bytes can hold is refused before any hold (a 42-byte FLAC claimed 50 million
 * seconds: 5,000 USD, and a 754 MB mock transcript); the mock hears at most 10 hours, as a
 * header may still claim far more than any speech (m4a and webm timelines may have gaps).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError } from "../auth/support.ts";
import { flacStreamHeader } from "../../src/audio/encode-flac.ts";
import { encodeMp3Silence } from "../../src/audio/encode-mp3-silence.ts";
import { ascii, box, concat, mvhd, noise, uintBE } from "../audio/_fixtures.ts";

let gw: TestGateway;
let account: { userId: string; key: string };
beforeAll(async () => {
  gw = await startTestGateway();
  account = await createToken(gw);
});
afterAll(() => gw.close());

function transcribe(bytes: Uint8Array, name: string): Promise<Response> {
  const form = new FormData();
  form.append("model", "demo-transcribe");
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  return gw.fetch("/v1/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${account.key}` }, body: form });
}

async function nothingCharged<T>(run: () => Promise<T>): Promise<T> {
  const balance = async () => (await gw.admin("GET", `/v1/admin/users/${account.userId}`)).body.balance;
  const before = await balance();
  const result = await run();
  expect(await balance()).toBe(before);
  return result;
}

/** An M4A whose movie header states `seconds`, with a little data: nothing in MP4 bounds it by size. */
const m4aOf = (seconds: number) => concat(box("ftyp", ascii("M4A "), uintBE(0, 4), ascii("M4A isom")), box("moov", mvhd(0, 1000, seconds * 1000)), box("mdat", noise(500)));

test("a 42-byte FLAC whose STREAMINFO claims 50,000,000 s → 400 naming both numbers", async () => {
  const message = await nothingCharged(async () => expectError(await transcribe(flacStreamHeader(50_000_000 * 1000, 1000), "a.flac"), 400, "invalid_request_error"));
  expect(message).toBe("Invalid 'file': its header claims 50000000 s of audio, but 42 bytes of flac hold at most 0 s");
});

test("an MP3 of 1 s whose VBRI tag claims 10 hours → 400", async () => {
  const mp3 = encodeMp3Silence(1).slice();
  mp3.fill(0, 4, 417);
  mp3.set(concat(ascii("VBRI"), uintBE(1, 2), uintBE(0, 2), uintBE(0, 2), uintBE(mp3.length, 4), uintBE(1_378_125, 4)), 36);
  const message = await nothingCharged(async () => expectError(await transcribe(mp3, "a.mp3"), 400, "invalid_request_error"));
  expect(message).toBe(`Invalid 'file': its header claims 36000 s of audio, but ${mp3.length} bytes of mp3 hold at most ${Math.round(mp3.length / 0.8) / 1000} s`);
});

test("the mock hears at most 10 hours: an M4A stating 10 h 1 s → 400 naming the limit, the hold refunded", async () => {
  const message = await nothingCharged(async () => expectError(await transcribe(m4aOf(36_001), "a.m4a"), 400, "invalid_request_error"));
  expect(message).toBe("The mock transcription model hears at most 36000 s (10 hours) of audio per request, not 36001 s");
});

test("control: the same M4A stating 10 hours is transcribed", async () => {
  const response = await transcribe(m4aOf(36_000), "a.m4a");
  expect(response.status).toBe(200);
  expect((await response.json()).text.split(" ").length).toBe(90_000);
});
