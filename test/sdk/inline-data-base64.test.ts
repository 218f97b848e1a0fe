import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ApiError, type Content, type FunctionResponsePart } from "@google/genai";
import { KINDS, MODELS, onlyRequest, REMOTE_KINDS, rejectionOf, startWorld, type KindName, type World } from "./_support.ts";

/**
 * Gemini's inlineData.data is bytes, which Google reads as proto3's JSON mapping says: base64
 * of the standard or URL-safe alphabet, padded or not (its decoder also skips whitespace).
 * Anything else Google answers with 400 INVALID_ARGUMENT, and so does the gateway, before any
 * upstream call, whatever the channel; every form Google decodes is served, and reaches an
 * upstream of another format as the standard padded base64 it reads.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** Bytes whose standard base64 has both of the alphabets' differing characters. */
const STANDARD = "+/+/AQ==";

const withImage = (data: string) => [{ role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data } }] }];

const NOT_BASE64: [string, string][] = [
  ["a data URL", `data:image/png;base64,${STANDARD}`],
  ["a web URL", "https://example.test/cat.png"],
  ["text with a character of neither alphabet", "not base64!"],
  ["a lone last character (6 bits)", "+/+/A"],
  ["both alphabets at once", "+/-_AQ=="],
  ["padding of the wrong length", "+/+/AQ="],
  ["padding before the end", "+/+/AQ==+/+/"],
];

/** Every request an upstream of any kind received since the last reset. */
const upstreamRequests = () => REMOTE_KINDS.reduce((sum, kind) => sum + world.upstreams[kind].requests.length, 0);

describe.each(KINDS.map((k) => [k]))("to the %s channel", (kind: KindName) => {
  test.each(NOT_BASE64)("%s is Google's 400 INVALID_ARGUMENT naming the field, and no upstream is called", async (_, data) => {
    const error = await rejectionOf(world.genai.models.generateContent({ model: MODELS[kind], contents: withImage(data) }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    const body = JSON.parse(error.message).error;
    expect(body).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", type: "invalid_request_error" });
    expect(body.message).toContain("contents[0].parts[1].inlineData.data");
    expect(upstreamRequests()).toBe(0);
  });
});

test("the stream and countTokens refuse it the same way", async () => {
  const stream = await rejectionOf(world.genai.models.generateContentStream({ model: MODELS.gemini, contents: withImage("not base64!") }));
  expect(stream.status).toBe(400);
  const count = await rejectionOf(world.genai.models.countTokens({ model: MODELS.gemini, contents: withImage("not base64!") }));
  expect(count.status).toBe(400);
  expect(JSON.parse(count.message).error.message).toContain("contents[0].parts[1].inlineData.data");
  expect(upstreamRequests()).toBe(0);
});

const GOOGLE_DECODES: [string, string][] = [
  ["standard, padded", STANDARD],
  ["standard, unpadded", "+/+/AQ"],
  ["URL-safe, padded", "-_-_AQ=="],
  ["URL-safe, unpadded", "-_-_AQ"],
  ["standard, broken into lines as MIME writes it", "+/+/\r\nAQ==\n"],
  ["empty", ""],
];

describe.each(GOOGLE_DECODES)("%s", (_, data) => {
  test("is sent to a gemini upstream", async () => {
    const answer = await world.genai.models.generateContent({ model: MODELS.gemini, contents: withImage(data) });
    expect(answer.text?.length).toBeGreaterThan(0);
    expect(onlyRequest(world, "gemini").body.contents[0].parts[1].inlineData.mimeType).toBe("image/png");
  });

  test("reaches anthropic and openai upstreams as standard padded base64", async () => {
    const standard = data === "" ? "" : STANDARD;
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: withImage(data) });
    expect(onlyRequest(world, "anthropic").body.messages[0].content[1].source).toEqual({ type: "base64", media_type: "image/png", data: standard });
    await world.genai.models.generateContent({ model: MODELS.openai, contents: withImage(data) });
    expect(onlyRequest(world, "openai").body.messages[0].content[1].image_url.url).toBe(`data:image/png;base64,${standard}`);
  });
});

/** A tool loop whose function answered with `media` (Gemini 3's multimodal function responses); some are not parts Gemini takes. */
const withFunctionMedia = (media: object): Content[] => [
  { role: "user", parts: [{ text: "Draw a cat." }] },
  { role: "model", parts: [{ functionCall: { name: "draw", args: {} } }] },
  { role: "user", parts: [{ functionResponse: { name: "draw", response: { ok: true }, parts: [media as FunctionResponsePart] } }] },
];

describe("media in a function's response", () => {
  test.each(NOT_BASE64)("%s is Google's 400 naming the field, and no upstream is called", async (_, data) => {
    const contents = withFunctionMedia({ inlineData: { mimeType: "image/png", data } });
    const error = await rejectionOf(world.genai.models.generateContent({ model: MODELS.gemini, contents }));
    expect(error.status).toBe(400);
    expect(JSON.parse(error.message).error.message).toContain("contents[2].parts[0].functionResponse.parts[0].inlineData.data");
    expect(upstreamRequests()).toBe(0);
  });

  test("a part with neither inlineData nor fileData is a 400, and no upstream is called", async () => {
    const error = await rejectionOf(world.genai.models.generateContent({ model: MODELS.gemini, contents: withFunctionMedia({ text: "a cat" }) }));
    expect(error.status).toBe(400);
    expect(JSON.parse(error.message).error.message).toContain("contents[2].parts[0].functionResponse.parts[0].inlineData");
    expect(upstreamRequests()).toBe(0);
  });

  test("base64 Google decodes reaches a gemini upstream, its displayName with it", async () => {
    const media = { inlineData: { mimeType: "image/png", data: "-_-_AQ", displayName: "cat.png" } };
    const answer = await world.genai.models.generateContent({ model: MODELS.gemini, contents: withFunctionMedia(media) });
    expect(answer.text?.length).toBeGreaterThan(0);
    const sent = onlyRequest(world, "gemini").body.contents[2].parts[0].functionResponse.parts[0].inlineData;
    expect(sent).toMatchObject({ mimeType: "image/png", displayName: "cat.png" });
  });
});
