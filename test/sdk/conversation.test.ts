import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { CALLERS, MODELS, onlyRequest, REMOTE_KINDS, startWorld, type CallerName, type RemoteKind, type World } from "./_support.ts";

/**
 * Issue 3 item 1: system prompts and multi-turn conversations sent through each caller SDK
 * reach every upstream kind in that upstream's own form: OpenAI a leading role "system"
 * message, Anthropic the top-level `system`, Gemini `systemInstruction`; the turns in order
 * with that format's role names (assistant / model).
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const SYSTEM = "You are a terse assistant. Answer in French.";
const TURNS = [
  { role: "user", text: "My name is Ada." },
  { role: "assistant", text: "Enchantée, Ada." },
  { role: "user", text: "What is my name?" },
] as const;

/** Sends SYSTEM + TURNS the way each SDK's users write them. */
const send: Record<CallerName, (model: string) => Promise<unknown>> = {
  openai: (model) =>
    world.openai.chat.completions.create({
      model,
      messages: [{ role: "system", content: SYSTEM }, ...TURNS.map((t) => ({ role: t.role, content: t.text }))],
    }),
  anthropic: (model) =>
    world.anthropic.messages.create({ model, max_tokens: 256, system: SYSTEM, messages: TURNS.map((t) => ({ role: t.role, content: t.text })) }),
  genai: (model) =>
    world.genai.models.generateContent({
      model,
      contents: TURNS.map((t) => ({ role: t.role === "assistant" ? "model" : "user", parts: [{ text: t.text }] })),
      config: { systemInstruction: SYSTEM },
    }),
};

/** The text of an OpenAI or Anthropic message content (a string or an array of blocks/parts). */
function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b: any) => (b.type === "text" ? b.text : "")).join("");
  return "";
}

function expectUpstreamConversation(kind: RemoteKind, body: any) {
  if (kind === "openai") {
    const messages = body.messages as any[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(textOfContent(messages[0].content)).toBe(SYSTEM);
    expect(messages.slice(1).map((m) => textOfContent(m.content))).toEqual(TURNS.map((t) => t.text));
  } else if (kind === "anthropic") {
    expect(textOfContent(body.system)).toBe(SYSTEM);
    const messages = body.messages as any[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages.map((m) => textOfContent(m.content))).toEqual(TURNS.map((t) => t.text));
  } else {
    expect((body.systemInstruction.parts as any[]).map((p) => p.text).join("")).toBe(SYSTEM);
    const contents = body.contents as any[];
    expect(contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
    expect(contents.map((c) => c.parts.map((p: any) => p.text).join(""))).toEqual(TURNS.map((t) => t.text));
    // No system turn smuggled into contents.
    expect(JSON.stringify(contents)).not.toContain(SYSTEM);
  }
}

describe.each(CALLERS.map((c) => [c]))("caller SDK %s", (caller: CallerName) => {
  test.each(REMOTE_KINDS.map((k) => [k]))("system prompt and three turns reach the %s upstream in its format", async (kind) => {
    await send[caller](MODELS[kind as RemoteKind]);
    expectUpstreamConversation(kind as RemoteKind, onlyRequest(world, kind as RemoteKind).body);
  });

  test("mock upstream answers the last user turn", async () => {
    const answer: any = await send[caller](MODELS.mock);
    const text =
      caller === "openai"
        ? answer.choices[0].message.content
        : caller === "anthropic"
          ? textOfContent(answer.content)
          : answer.candidates[0].content.parts.map((p: any) => p.text ?? "").join("");
    expect(text).toContain("What is my name?");
    expect(text).not.toContain("My name is Ada.");
  });
});

test("openai caller: a `developer` message (what current OpenAI SDK code sends) becomes Anthropic's system", async () => {
  await world.openai.chat.completions.create({
    model: MODELS.anthropic,
    messages: [
      { role: "developer", content: SYSTEM },
      { role: "user", content: "Hello" },
    ],
  });
  const body = onlyRequest(world, "anthropic").body;
  expect(textOfContent(body.system)).toBe(SYSTEM);
  expect(body.messages.map((m: any) => m.role)).toEqual(["user"]);
});

test("anthropic caller: system given as text blocks reaches Gemini's systemInstruction", async () => {
  await world.anthropic.messages.create({
    model: MODELS.gemini,
    max_tokens: 64,
    system: [{ type: "text", text: SYSTEM }],
    messages: [{ role: "user", content: "Hello" }],
  });
  const body = onlyRequest(world, "gemini").body;
  expect(body.systemInstruction.parts.map((p: any) => p.text).join("")).toBe(SYSTEM);
  expect(body.contents).toHaveLength(1);
});

describe("openai SDK, responses.create", () => {
  test.each(REMOTE_KINDS.map((k) => [k]))("instructions and three turns as messages reach the %s upstream in its format", async (kind) => {
    await world.openai.responses.create({ model: MODELS[kind as RemoteKind], instructions: SYSTEM, input: TURNS.map((t) => ({ role: t.role, content: t.text })) });
    expectUpstreamConversation(kind as RemoteKind, onlyRequest(world, kind as RemoteKind).body);
  });

  test.each(REMOTE_KINDS.map((k) => [k]))("a developer message, typed items and an earlier answer's output sent back reach the %s upstream as the same conversation", async (kind) => {
    const model = MODELS[kind as RemoteKind];
    const earlier = await world.openai.responses.create({ model, input: "Hello" });
    world.reset();
    // The earlier Response's own output item, with the turns' text in place of the upstream's.
    const [answer] = earlier.output as OpenAI.Responses.ResponseOutputMessage[];
    const content = [{ ...answer!.content[0]!, text: TURNS[1].text } as OpenAI.Responses.ResponseOutputText];
    await world.openai.responses.create({
      model,
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: SYSTEM }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: TURNS[0].text }] },
        { ...answer!, content },
        { role: "user", content: TURNS[2].text },
      ],
    });
    expectUpstreamConversation(kind as RemoteKind, onlyRequest(world, kind as RemoteKind).body);
  });

  test("mock upstream answers the last user turn", async () => {
    const response = await world.openai.responses.create({ model: MODELS.mock, instructions: SYSTEM, input: TURNS.map((t) => ({ role: t.role, content: t.text })) });
    expect(response.output_text).toContain("What is my name?");
    expect(response.output_text).not.toContain("My name is Ada.");
  });
});
