import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

/**
 * OpenAI takes messages of blank content: an assistant message of content "" beside its tool
 * calls (what many clients send back), an empty user message. Anthropic refuses a blank text
 * block and an empty message (400), Gemini an empty text part and a content without parts:
 * such a conversation reached them as it was and was refused. The blank text said nothing,
 * so it is left out, and what the model reads is the same.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const CONVERSATION: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "user", content: "What is the weather in Paris?" },
  { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
  { role: "tool", tool_call_id: "call_1", content: '{"temperature":18}' },
  { role: "user", content: "" },
  { role: "assistant", content: " \n" },
  { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "Thanks. And tomorrow?" }] },
];
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

const ask = (model: string) => world.openai.chat.completions.create({ model, messages: CONVERSATION, tools: TOOLS });

/** Where each upstream's body has its turns, their role and parts, and what a part is. */
const READ = {
  anthropic: { turns: (body: any): any[] => body.messages, parts: (turn: any): any[] => turn.content, kind: (part: any) => part.type, model: "assistant", call: "tool_use", result: "tool_result" },
  gemini: { turns: (body: any): any[] => body.contents, parts: (turn: any): any[] => turn.parts, kind: (part: any) => Object.keys(part)[0], model: "model", call: "functionCall", result: "functionResponse" },
};

describe("an openai caller's blank messages and texts", () => {
  test.each(["anthropic", "gemini"] as const)("%s upstream: no blank text and no empty turn; the turns still alternate", async (kind) => {
    await ask(MODELS[kind]);
    const read = READ[kind];
    const turns = read.turns(onlyRequest(world, kind).body);
    expect(turns.map((turn) => [turn.role, read.parts(turn).map(read.kind)])).toEqual([
      ["user", ["text"]],
      [read.model, [read.call]],
      ["user", [read.result, "text"]],
    ]);
    const texts = turns.flatMap((turn) => read.parts(turn).flatMap((part) => (typeof part.text === "string" ? [part.text] : [])));
    expect(texts).toEqual(["What is the weather in Paris?", "Thanks. And tomorrow?"]);
  });

  test("openai upstream: the conversation as it was sent", async () => {
    await ask(MODELS.openai);
    const messages: any[] = onlyRequest(world, "openai").body.messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user", "assistant", "user"]);
  });
});
