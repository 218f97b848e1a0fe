import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { FinishReason, SchemaType, type GenerateContentResponse } from "@google/generative-ai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_COUNT_FIXTURE } from "../helpers/anthropic-upstream.ts";
import { GEMINI_COUNT_FIXTURE } from "../helpers/gemini-upstream.ts";
import { answerWithText, expectedOf, KINDS, MODELS, onlyRequest, REMOTE_KINDS, startWorld, UPSTREAM_MODELS, type KindName, type RemoteKind, type World } from "../sdk/_support.ts";
import { answerSchemaUpstream, legacyModel } from "./_legacy-support.ts";

/**
 * Google's legacy SDK (@google/generative-ai: GoogleGenerativeAI, getGenerativeModel with the
 * gateway as RequestOptions.baseUrl) against every upstream kind: generateContent,
 * generateContentStream (its chunks and its aggregated response, each with the SDK's text()
 * helper), a chat session over several turns and countTokens. The SDK parses streams and
 * builds its helpers itself, so this is the wire as it reads it.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** A response's usage as the caller reads it. */
function usageOf(response: GenerateContentResponse) {
  const { promptTokenCount, candidatesTokenCount, totalTokenCount } = response.usageMetadata!;
  return { promptTokenCount, candidatesTokenCount, totalTokenCount };
}

/** The usage the upstream reported for `mode`, in Gemini's names; the mock's own counts are positive. */
function expectUpstreamUsage(kind: KindName, mode: "plain" | "stream", response: GenerateContentResponse) {
  const usage = usageOf(response);
  expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.candidatesTokenCount);
  if (kind === "mock") {
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.candidatesTokenCount).toBeGreaterThan(0);
    return;
  }
  const expected = expectedOf(kind, mode);
  expect(usage).toEqual({ promptTokenCount: expected.inputTokens, candidatesTokenCount: expected.outputTokens, totalTokenCount: expected.inputTokens + expected.outputTokens });
}

/** The upstream's text for `mode`; the mock echoes the prompt. */
function expectUpstreamText(kind: KindName, mode: "plain" | "stream", text: string, prompt: string) {
  if (kind === "mock") expect(text).toContain(prompt);
  else expect(text).toBe(expectedOf(kind, mode).text);
}

/** What a count of the prompt gives on each kind: the upstream's own count, the gateway's estimate (openai, which cannot count), the mock's. */
const COUNTED: Record<KindName, number | null> = {
  openai: null,
  anthropic: jsonFixture(ANTHROPIC_COUNT_FIXTURE).input_tokens,
  gemini: jsonFixture(GEMINI_COUNT_FIXTURE).totalTokens,
  mock: null,
};

/** The text of a message's content (a string, or blocks or parts with text). */
const textOf = (content: string | { text?: string }[]) => (typeof content === "string" ? content : content.map((block) => block.text ?? "").join(""));

/** The turns the upstream of `kind` was sent last, as [role, text] in its own format. */
function turnsUpstream(kind: RemoteKind): [string, string][] {
  const body = world.upstreams[kind].requests.at(-1)!.body;
  if (kind === "gemini") return body.contents.map((content: any) => [content.role, textOf(content.parts)]);
  return body.messages.map((message: any) => [message.role, textOf(message.content)]);
}

describe.each(KINDS.map((kind) => [kind]))("upstream kind %s", (kind: KindName) => {
  const prompt = `Hello from the legacy SDK to the ${kind} upstream`;

  test("generateContent: text(), STOP and the usage the upstream reported", async () => {
    const { response } = await legacyModel(world, MODELS[kind]).generateContent(prompt);
    expectUpstreamText(kind, "plain", response.text(), prompt);
    expect(response.candidates![0]!.finishReason).toBe(FinishReason.STOP);
    expect(response.candidates![0]!.content.role).toBe("model");
    expectUpstreamUsage(kind, "plain", response);
    if (kind === "gemini") expect(onlyRequest(world, kind).model).toBe(UPSTREAM_MODELS.gemini);
  });

  test("generateContentStream: the chunks' text() is the answer, and the aggregated response has it, STOP and the usage", async () => {
    const result = await legacyModel(world, MODELS[kind]).generateContentStream(prompt);
    let streamed = "";
    let chunks = 0;
    for await (const chunk of result.stream) {
      streamed += chunk.text();
      chunks++;
    }
    expect(chunks).toBeGreaterThan(2);
    expectUpstreamText(kind, "stream", streamed, prompt);
    const response = await result.response;
    expect(response.text()).toBe(streamed);
    expect(response.candidates![0]!.finishReason).toBe(FinishReason.STOP);
    expect(response.candidates![0]!.content.role).toBe("model");
    expectUpstreamUsage(kind, "stream", response);
    if (kind !== "mock") expect(onlyRequest(world, kind).body.stream ?? true).toBe(true);
  });

  test("a chat session over several turns: each answer read, the session's history sent back in order", async () => {
    const chat = legacyModel(world, MODELS[kind], { systemInstruction: "Be brief." }).startChat();
    const first = await chat.sendMessage("My name is Ada.");
    expectUpstreamText(kind, "plain", first.response.text(), "My name is Ada.");
    const second = await chat.sendMessage("Remember it.");
    expectUpstreamText(kind, "plain", second.response.text(), "Remember it.");
    const third = await chat.sendMessageStream("What is my name?");
    let streamed = "";
    for await (const chunk of third.stream) streamed += chunk.text();
    expectUpstreamText(kind, "stream", streamed, "What is my name?");
    if (kind === "mock") return;
    const turns = turnsUpstream(kind);
    const model = kind === "gemini" ? "model" : "assistant";
    const asked = turns.filter(([role]) => role !== "system");
    expect(asked.map(([role]) => role)).toEqual(["user", model, "user", model, "user"]);
    expect(asked.map(([, text]) => text)).toEqual(["My name is Ada.", first.response.text(), "Remember it.", second.response.text(), "What is my name?"]);
  });

  test("countTokens: the upstream's count where it counts, else the gateway's", async () => {
    const { totalTokens } = await legacyModel(world, MODELS[kind], { systemInstruction: "Be brief." }).countTokens(prompt);
    if (COUNTED[kind] !== null) expect(totalTokens).toBe(COUNTED[kind]!);
    else expect(totalTokens).toBeGreaterThan(0);
    if (kind !== "gemini") return;
    // The SDK counts a generateContentRequest naming its model; the channel's model goes upstream.
    const counted = onlyRequest(world, "gemini").body.generateContentRequest;
    expect(counted.model).toBe(`models/${UPSTREAM_MODELS.gemini}`);
    expect(counted.contents.map((content: any) => textOf(content.parts))).toEqual([prompt]);
  });
});

describe.each(REMOTE_KINDS.map((kind) => [kind]))("upstream kind %s", (kind: RemoteKind) => {
  test("JSON mode with a SchemaType responseSchema: text() is the upstream's JSON, the schema reaches it in its own field, nullable as it reads it", async () => {
    answerWithText(world, kind, JSON.stringify({ name: "Ada", age: null }));
    const model = legacyModel(world, MODELS[kind], {
      generationConfig: {
        responseMimeType: "application/json",
        responseSchema: { type: SchemaType.OBJECT, properties: { name: { type: SchemaType.STRING }, age: { type: SchemaType.INTEGER, nullable: true } }, required: ["name"] },
      },
    });
    const { response } = await model.generateContent("Who is Ada?");
    expect(JSON.parse(response.text())).toEqual({ name: "Ada", age: null });
    const age = answerSchemaUpstream(kind, onlyRequest(world, kind).body).properties.age;
    // Gemini is sent the schema as written; the others read nullable as a type union.
    expect(age).toEqual(kind === "gemini" ? { type: "integer", nullable: true } : { type: ["integer", "null"] });
  });
});

test("apiVersion v1 in RequestOptions is served as v1beta is", async () => {
  const model = legacyModel(world, MODELS.gemini);
  const { response } = await model.generateContent("Hi", { apiVersion: "v1" });
  expect(response.text()).toBe(expectedOf("gemini", "plain").text);
});
