import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { FunctionCall } from "@google/genai";
import { genaiWeatherTool, KINDS, MODELS, startWorld, type KindName, type World } from "./_support.ts";

/**
 * genai's chat sessions (`ai.chats.create`): the SDK keeps the history and sends all of it on
 * each `sendMessage` / `sendMessageStream`. A streamed answer goes into that history as one
 * model content per chunk, so the gateway sees a model turn split over several contents, and
 * a function-calling turn as a content of calls followed by contents of text.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The text of the last turn the upstream of `kind` received, in its own format. */
function lastUserTextUpstream(world: World, kind: Exclude<KindName, "mock">): string {
  const body = world.upstreams[kind].requests.at(-1)!.body;
  if (kind === "gemini") return body.contents.at(-1).parts.map((p: any) => p.text ?? "").join("");
  const content = body.messages.at(-1).content;
  return typeof content === "string" ? content : content.map((b: any) => b.text ?? "").join("");
}

describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
  test("sendMessage then sendMessageStream: each turn answered, the history sent back in order", async () => {
    const chat = world.genai.chats.create({ model: MODELS[kind], config: { systemInstruction: "Be brief." } });
    const first = await chat.sendMessage({ message: "My name is Ada." });
    expect(first.text?.length).toBeGreaterThan(0);
    let streamed = "";
    for await (const chunk of await chat.sendMessageStream({ message: "What is my name?" })) streamed += chunk.text ?? "";
    expect(streamed.length).toBeGreaterThan(0);
    const third = await chat.sendMessage({ message: "Thanks." });
    expect(third.candidates?.[0]?.finishReason).toBeTruthy();
    expect(chat.getHistory(true).filter((c) => c.role === "user")).toHaveLength(3);
    if (kind !== "mock") expect(lastUserTextUpstream(world, kind)).toBe("Thanks.");
  });

  test("a streamed function-calling turn, answered with a functionResponse per call: the next turn is accepted", async () => {
    const chat = world.genai.chats.create({ model: MODELS[kind], config: { tools: [genaiWeatherTool] } });
    const calls: FunctionCall[] = [];
    for await (const chunk of await chat.sendMessageStream({ message: "Weather in Paris?" })) calls.push(...(chunk.functionCalls ?? []));
    expect(calls.length).toBeGreaterThan(0);
    const responses = calls.map((call) => ({ functionResponse: { id: call.id, name: call.name, response: { temperature: 18 } } }));
    let answer = "";
    for await (const chunk of await chat.sendMessageStream({ message: responses })) answer += chunk.text ?? "";
    expect(chat.getHistory(true).at(-1)?.role).toBe("model");
    if (kind === "mock") expect(answer).toContain("18");
  });
});
