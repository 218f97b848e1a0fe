import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { bearer } from "../helpers/gateway.ts";
import { summarizeStreamFixture } from "../helpers/openai-upstream.ts";
import { pingsThenFixture } from "../helpers/loopback-upstream.ts";
import { MODELS, startWorld, type World } from "./_support.ts";

/**
 * An upstream that is alive but has nothing to say yet (a reasoning model sending keep-alive
 * comments) must not leave the caller without a response head, or a proxy in front without
 * bytes, until the first token: the gateway writes its own SSE comment, which every SDK skips
 * (a Gemini caller's is white space in its next event instead: test/clients/generative-ai-keep-alive.test.ts).
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const FIXTURE = "openai-chat-stream.sse";
const PINGS = 9;
const PING_EVERY_MS = 150;

/** Whether the upstream has begun sending the answer itself (after its pings). */
let answerSent = false;

/** An openai upstream that sends keep-alive comments for about 1.35 s, then the recorded stream. */
function pingThenAnswer(): void {
  answerSent = false;
  world.upstreams.openai.setBehavior({
    script: () =>
      pingsThenFixture(FIXTURE, PINGS, PING_EVERY_MS, () => {
        answerSent = true;
      }),
  });
}

test("the caller gets the response head and a comment while the upstream only pings, then the whole answer", async () => {
  pingThenAnswer();
  const response = await world.gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(world.key),
    body: JSON.stringify({ model: MODELS.openai, messages: [{ role: "user", content: "Think first" }], stream: true }),
  });
  expect(answerSent).toBe(false);
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toBe(": keep-alive\n\n");
  expect(answerSent).toBe(false);
  let rest = "";
  for (let read = await reader.read(); !read.done; read = await reader.read()) rest += new TextDecoder().decode(read.value);
  expect(rest.endsWith("data: [DONE]\n\n")).toBe(true);
  expect(rest).not.toContain("keep-alive");
});

test("the SDKs read past the keep-alive: openai (chat and responses), anthropic and genai streams read the whole answer", async () => {
  const expected = summarizeStreamFixture(FIXTURE).text;
  const question = [{ role: "user" as const, content: "Think first" }];

  pingThenAnswer();
  let openaiText = "";
  for await (const chunk of await world.openai.chat.completions.create({ model: MODELS.openai, messages: question, stream: true })) {
    openaiText += chunk.choices[0]?.delta.content ?? "";
  }
  expect(openaiText).toBe(expected);

  pingThenAnswer();
  const message = await world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: question }).finalMessage();
  expect(message.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe(expected);

  pingThenAnswer();
  let genaiText = "";
  for await (const chunk of await world.genai.models.generateContentStream({ model: MODELS.openai, contents: "Think first" })) genaiText += chunk.text ?? "";
  expect(genaiText).toBe(expected);

  pingThenAnswer();
  const response = await world.openai.responses.stream({ model: MODELS.openai, input: "Think first" }).finalResponse();
  expect(response.output_text).toBe(expected);
  // Four pinging upstreams of about 1.35 s each.
}, 10_000);
