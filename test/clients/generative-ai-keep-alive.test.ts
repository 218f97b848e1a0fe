import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { bearer } from "../helpers/gateway.ts";
import { pingsThenFixture } from "../helpers/loopback-upstream.ts";
import { summarizeStreamFixture } from "../helpers/openai-upstream.ts";
import { MODELS, startWorld, type World } from "../sdk/_support.ts";
import { legacyModel } from "./_legacy-support.ts";

/**
 * Google's legacy SDK reads a stream with one pattern, `data: <json>` and a blank line, from
 * the start of what it has not parsed yet: anything else, an SSE comment included, stops the
 * parse for good, and the stream fails at its end ("Failed to parse stream"). Gemini sends
 * nothing else; the gateway's keep-alive, for an upstream that is alive but shows the caller
 * nothing yet, must be something that pattern still reads.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const FIXTURE = "openai-chat-stream.sse";

/** An openai upstream that only pings for about 1.35 s (past the gateway's first keep-alive), then answers. */
function pingThenAnswer(): void {
  world.upstreams.openai.setBehavior({ script: () => pingsThenFixture(FIXTURE, 9, 150) });
}

test("the SDK reads the whole answer of an upstream that pinged past the keep-alive's second", async () => {
  pingThenAnswer();
  const result = await legacyModel(world, MODELS.openai).generateContentStream("Think first");
  let streamed = "";
  for await (const chunk of result.stream) streamed += chunk.text();
  const expected = summarizeStreamFixture(FIXTURE).text;
  expect(streamed).toBe(expected);
  const response = await result.response;
  expect(response.text()).toBe(expected);
  expect(response.candidates?.[0]?.finishReason).toBe("STOP" as never);
  expect(response.usageMetadata?.promptTokenCount).toBe(summarizeStreamFixture(FIXTURE).usage!.prompt_tokens);
});

test("the keep-alive is the next event's data line begun early and padded with white space; every event is still one JSON object", async () => {
  pingThenAnswer();
  const response = await world.gw.fetch(`/v1beta/models/${MODELS.openai}:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: bearer(world.key),
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Think first" }] }] }),
  });
  expect(response.headers.get("content-type")).toStartWith("text/event-stream");
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  // The first write comes while the upstream still pings: the head and the keep-alive.
  const first = decoder.decode((await reader.read()).value, { stream: true });
  expect(first).toBe("data: ");
  let body = first;
  for (let read = await reader.read(); !read.done; read = await reader.read()) body += decoder.decode(read.value, { stream: true });
  const events = body.split("\n\n");
  expect(events.pop()).toBe("");
  for (const event of events) {
    expect(event).toMatch(/^data: /);
    expect(event).not.toContain("\n");
    JSON.parse(event.slice("data:".length));
  }
  expect(events[0]!.slice("data:".length)).toMatch(/^ +\{/);
});
