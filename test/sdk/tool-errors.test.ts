import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

/**
 * A tool call that failed: Anthropic's tool_result `is_error`, Gemini's functionResponse whose
 * response holds only `error`. Each reaches the other as that format's failure; OpenAI's tool
 * message has no such flag, so the caller is told it was not sent.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const TOOL = { name: "get_weather", description: "Weather for a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };

/** An Anthropic conversation whose last turn is a failed call of get_weather. */
const failedCall = (model: string) => ({
  model,
  max_tokens: 64,
  tools: [TOOL],
  messages: [
    { role: "user" as const, content: "Weather in Paris?" },
    { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "toolu_01", name: "get_weather", input: { city: "Paris" } }] },
    { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "toolu_01", content: "service unavailable", is_error: true }] },
  ],
});

test("anthropic is_error → gemini: the functionResponse's response is { error }, and a text result stays { result }", async () => {
  await world.anthropic.messages.create(failedCall(MODELS.gemini));
  const parts = onlyRequest(world, "gemini").body.contents.flatMap((content: { parts: any[] }) => content.parts);
  expect(parts.find((part: any) => part.functionResponse).functionResponse).toEqual({ name: "get_weather", response: { error: "service unavailable" } });

  world.reset();
  const succeeded = failedCall(MODELS.gemini);
  succeeded.messages[2] = { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "18 C" }] } as (typeof succeeded.messages)[2];
  await world.anthropic.messages.create(succeeded);
  const again = onlyRequest(world, "gemini").body.contents.flatMap((content: { parts: any[] }) => content.parts);
  expect(again.find((part: any) => part.functionResponse).functionResponse.response).toEqual({ result: "18 C" });
});

test("anthropic is_error → openai: the result is sent as its content and the warnings header names is_error", async () => {
  const { response } = await world.anthropic.messages.create(failedCall(MODELS.openai)).withResponse();
  const toolMessage = onlyRequest(world, "openai").body.messages.find((message: { role: string }) => message.role === "tool");
  expect(toolMessage.content).toBe("service unavailable");
  expect(response.headers.get("x-gateway-warnings")).toContain("is_error");
});

test("a genai caller's functionResponse { error } reaches anthropic as tool_result is_error; one with output does not", async () => {
  const ask = (response: Record<string, unknown>) =>
    world.genai.models.generateContent({
      model: MODELS.anthropic,
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response } }] },
      ],
    });
  const resultSent = () => onlyRequest(world, "anthropic").body.messages.at(-1).content.find((block: { type: string }) => block.type === "tool_result");
  await ask({ error: "service unavailable" });
  expect(resultSent().is_error).toBe(true);
  world.reset();
  await ask({ output: "18 C" });
  expect(resultSent().is_error).toBeUndefined();
});
