import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { CALLERS, expectedOf, MODELS, REMOTE_KINDS, startWorld, type CallerName, type RemoteKind, type World } from "./_support.ts";

/**
 * Issue 3 item 4, as each SDK sees it: an upstream stream cut short (ending early, or the
 * connection dropping) ends the caller's stream with that format's error event, which the
 * caller's SDK raises as its own error after the text that did arrive; never a clean end
 * that passes a truncated answer off as complete, and never a hang.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** Cuts each upstream's text stream after a few text events, before any finish. */
function cutUpstream(kind: RemoteKind, end: "end" | "abort") {
  if (kind === "openai") world.upstreams.openai.setBehavior({ streamFixture: "openai-chat-stream-truncated.sse", streamEnd: end });
  // message_start, content_block_start, ping, two text deltas.
  if (kind === "anthropic") world.upstreams.anthropic.setBehavior({ cutAfterEvents: 5, streamEnd: end });
  // Two text chunks, no finishReason.
  if (kind === "gemini") world.upstreams.gemini.setBehavior({ cutAfterEvents: 2, streamEnd: end });
}

/** Streams through `caller`'s SDK until it ends or throws; the text seen and the error. */
async function streamUntilError(caller: CallerName, model: string): Promise<{ text: string; error: any }> {
  let text = "";
  try {
    if (caller === "openai") {
      const stream = await world.openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    } else if (caller === "anthropic") {
      const stream = world.anthropic.messages.stream({ model, max_tokens: 128, messages: [{ role: "user", content: "Hi" }] });
      stream.on("text", (delta) => {
        text += delta;
      });
      await stream.finalMessage();
    } else {
      const stream = await world.genai.models.generateContentStream({ model, contents: "Hi" });
      for await (const chunk of stream) text += (chunk.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? "").join("");
    }
  } catch (error) {
    return { text, error };
  }
  return { text, error: null };
}

describe.each(CALLERS.map((c) => [c]))("caller SDK %s", (caller: CallerName) => {
  for (const kind of REMOTE_KINDS) {
    for (const end of ["end", "abort"] as const) {
      test(`${kind} upstream stream ${end === "end" ? "ends early" : "drops the connection"}: the SDK raises its error after the partial text`, async () => {
        cutUpstream(kind, end);
        const { text, error } = await streamUntilError(caller, MODELS[kind]);
        expect(error).not.toBeNull();
        if (caller === "openai") expect(error).toBeInstanceOf(OpenAI.APIError);
        if (caller === "anthropic") expect(error).toBeInstanceOf(Anthropic.APIError);
        if (caller === "genai") {
          expect(error).toBeInstanceOf(ApiError);
          expect(error.status).toBe(502);
        }
        // What arrived before the cut was delivered, and is a strict prefix of the whole answer.
        const whole = expectedOf(kind, "stream").text;
        expect(text.length).toBeGreaterThan(0);
        expect(whole.startsWith(text)).toBe(true);
        expect(text.length).toBeLessThan(whole.length);
      });
    }
  }
});
