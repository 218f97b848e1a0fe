import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { bearer } from "../helpers/common.ts";
import { readFixture } from "../helpers/openai-upstream.ts";
import { GEMINI_STREAM_FIXTURE } from "../helpers/gemini-upstream.ts";
import { expectedOf, KINDS, MODELS, REMOTE_KINDS, startWorld, type World } from "../sdk/_support.ts";

/**
 * streamGenerateContent without `?alt=sse` (the genai SDKs always send it; REST clients that
 * follow Gemini's API without it are many) answers as Gemini does: one JSON array
 * (application/json), each chunk an element written as it comes, so a client that parses the
 * array as it grows reads the answer while it streams. It was SSE whatever the caller asked,
 * which such a client cannot parse at all. A stream that breaks after it began ends with
 * Gemini's error object as the last element, and the array is still closed; a keep-alive is
 * white space, which JSON allows between elements.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const BODY = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });

function streamGenerateContent(kind: (typeof KINDS)[number], query = ""): Promise<Response> {
  return world.gw.fetch(`/v1beta/models/${MODELS[kind]}:streamGenerateContent${query}`, { method: "POST", headers: bearer(world.key), body: BODY });
}

/** The data of each event of an SSE body. */
function sseData(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => JSON.parse(block.slice("data: ".length)));
}

/** An event-stream answer whose body `write` sends, piece by piece. */
function eventStream(write: (send: (text: string) => void) => Promise<void>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      await write((text) => controller.enqueue(encoder.encode(text)));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** `response`'s body as it is read: its first read, and the whole of it once read to the end. */
function reading(response: Response): { first: Promise<string>; whole: Promise<string> } {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const first = reader.read().then(({ value }) => decoder.decode(value, { stream: true }));
  const whole = first.then(async (text) => {
    for (let next = await reader.read(); !next.done; next = await reader.read()) text += decoder.decode(next.value, { stream: true });
    return text;
  });
  return { first, whole };
}

const textOf = (chunks: any[]) => chunks.map((chunk) => (chunk.candidates?.[0]?.content?.parts ?? []).map((part: any) => part.text ?? "").join("")).join("");

describe.each(KINDS.map((kind) => [kind]))("%s upstream", (kind) => {
  test("without alt=sse: one JSON array of the chunks, the last one finished and with the usage", async () => {
    const response = await streamGenerateContent(kind);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const chunks = JSON.parse(await response.text());
    expect(Array.isArray(chunks)).toBe(true);
    if (kind !== "mock") expect(textOf(chunks)).toBe(expectedOf(kind, "stream").text);
    expect(textOf(chunks).length).toBeGreaterThan(0);
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(chunks.at(-1).usageMetadata.totalTokenCount).toBeGreaterThan(0);
  });
});

test.each(REMOTE_KINDS.map((kind) => [kind]))("%s upstream: the array holds the very chunks the SSE stream sends", async (kind) => {
  const sse = await streamGenerateContent(kind, "?alt=sse");
  expect(sse.headers.get("content-type")).toStartWith("text/event-stream");
  const events = sseData(await sse.text());
  const array = JSON.parse(await (await streamGenerateContent(kind)).text());
  // The response id of a translated stream is the request's own when the upstream gave none.
  const withoutId = (chunks: any[]) => chunks.map(({ responseId: _id, ...chunk }) => chunk);
  expect(withoutId(array)).toEqual(withoutId(events as any[]));
});

test("each chunk is written as it comes: the first element arrives while the upstream still holds the rest", async () => {
  const chunks = readFixture(GEMINI_STREAM_FIXTURE).split(/(?<=\r\n\r\n|\n\n)/).filter((block) => block.trim() !== "");
  const rest = Promise.withResolvers<void>();
  const firstSent = Promise.withResolvers<void>();
  world.upstreams.gemini.setBehavior({
    script: () =>
      eventStream(async (send) => {
        send(chunks[0]!);
        firstSent.resolve();
        await rest.promise;
        for (const chunk of chunks.slice(1)) send(chunk);
      }),
  });
  const body = reading(await streamGenerateContent("gemini"));
  await firstSent.promise;
  // The rest is sent only once the first element has reached the caller.
  const first = await Promise.race([body.first, Bun.sleep(3_000).then(() => "nothing came")]);
  rest.resolve();
  expect(first.startsWith("[")).toBe(true);
  expect(JSON.parse(first.slice(1)).candidates[0].content.parts[0].text).toBe(textOf([JSON.parse(chunks[0]!.replace(/^data: /, ""))]));
  expect(textOf(JSON.parse(await body.whole))).toBe(expectedOf("gemini", "stream").text);
});

test("a stream that breaks after it began: Gemini's error object is the last element, and the array is closed", async () => {
  // Two text chunks, no finishReason.
  world.upstreams.gemini.setBehavior({ cutAfterEvents: 2 });
  const response = await streamGenerateContent("gemini");
  expect(response.status).toBe(200);
  const chunks = JSON.parse(await response.text());
  expect(textOf(chunks.slice(0, -1)).length).toBeGreaterThan(0);
  expect(chunks.at(-1)).toEqual({
    error: { message: "upstream stream ended before the response was complete", type: "upstream_error", code: 502, status: "UNAVAILABLE" },
  });
});

test("while the upstream only pings, the keep-alive is white space, and the whole body still parses", async () => {
  world.upstreams.openai.setBehavior({
    script: () =>
      eventStream(async (send) => {
        for (let i = 0; i < 9; i++) {
          send(": keep-alive\n\n");
          await Bun.sleep(150);
        }
        send(readFixture("openai-chat-stream.sse"));
      }),
  });
  const body = reading(await streamGenerateContent("openai"));
  const first = await body.first;
  expect(first.trim()).toBe("");
  expect(first.length).toBeGreaterThan(0);
  expect(textOf(JSON.parse(await body.whole))).toBe(expectedOf("openai", "stream").text);
});
