import { jsonFixture, sseFixtureEvents } from "./loopback-upstream.ts";

/**
 * Fixtures of upstreams asked for several answers (OpenAI's `n`, Gemini's `candidateCount`),
 * three each, and what they say, read from the files alone (independent of the gateway's
 * code). In the streams the answers interleave and answer 0 finishes first, as OpenAI sends
 * them: the OpenAI stream one choice a chunk, the Gemini stream several candidates a chunk
 * and some chunks without candidate 0 (its `index` left out, as proto3 JSON leaves out 0).
 */

export const OPENAI_SEVERAL_PLAIN = "openai-chat-completion-several.json";
export const OPENAI_SEVERAL_STREAM = "openai-chat-stream-several.sse";
export const GEMINI_SEVERAL_PLAIN = "gemini-generate-content-several.json";
export const GEMINI_SEVERAL_STREAM = "gemini-stream-several.sse";

/** How many answers each fixture holds. */
export const ANSWERS = 3;

/** The JSON chunks of an SSE fixture, `[DONE]` left out. */
export function fixtureChunks(name: string): any[] {
  return sseFixtureEvents(name)
    .filter((event) => event.data !== "[DONE]")
    .map((event) => JSON.parse(event.data));
}

/** Each answer's text by its index, from OpenAI bodies or chunks (`message` or `delta`). */
export function openAiAnswerTexts(bodies: any[]): string[] {
  const texts: string[] = [];
  for (const body of bodies) {
    for (const choice of body.choices ?? []) texts[choice.index] = (texts[choice.index] ?? "") + ((choice.message ?? choice.delta)?.content ?? "");
  }
  return texts;
}

/** Each answer's text by its index, from Gemini responses or chunks. */
export function geminiAnswerTexts(bodies: any[]): string[] {
  const texts: string[] = [];
  for (const body of bodies) {
    for (const candidate of body.candidates ?? []) {
      const index = candidate.index ?? 0;
      for (const part of candidate.content?.parts ?? []) texts[index] = (texts[index] ?? "") + (part.text ?? "");
    }
  }
  return texts;
}

/** The text of each fixture's answers, by index. */
export const SEVERAL_TEXTS = {
  openai: { plain: openAiAnswerTexts([jsonFixture(OPENAI_SEVERAL_PLAIN)]), stream: openAiAnswerTexts(fixtureChunks(OPENAI_SEVERAL_STREAM)) },
  gemini: { plain: geminiAnswerTexts([jsonFixture(GEMINI_SEVERAL_PLAIN)]), stream: geminiAnswerTexts(fixtureChunks(GEMINI_SEVERAL_STREAM)) },
};

/** An SSE response of `chunks` (OpenAI's end event after them when `done`), as an upstream sends it. */
export function sseOf(chunks: unknown[], done: boolean): Response {
  const text = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

/** The fixture's OpenAI chunks with no usage anywhere: the usage-only chunk dropped, `usage` removed from the rest. */
export function openAiChunksWithoutUsage(name: string): any[] {
  return fixtureChunks(name)
    .filter((chunk) => chunk.choices.length > 0)
    .map(({ usage: _usage, ...chunk }) => chunk);
}

/** The fixture's Gemini chunks (or response, as a list of one) without usageMetadata. */
export function geminiWithoutUsage(bodies: any[]): any[] {
  return bodies.map(({ usageMetadata: _usage, ...body }) => body);
}
