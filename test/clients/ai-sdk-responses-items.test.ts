import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { APICallError, generateText, streamText, type ModelMessage } from "ai";
import { bearer } from "../helpers/gateway.ts";
import { createUserKey, expectedOf, MODELS, rejectionOf, startWorld, type World } from "../sdk/_support.ts";
import { modelFor, requestsOf } from "./_ai-sdk-support.ts";

/**
 * The AI SDK's Responses provider (openai(model), its default) stores responses unless told
 * `store: false`, as OpenAI does, and so sends the assistant's earlier text back as an
 * item_reference naming the output item it came in. The gateway keeps the output items of
 * the Responses it gave, for their owner, so a conversation and a tool loop go on.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const firstTurn: ModelMessage = { role: "user", content: "Hello there" };
const secondTurn: ModelMessage = { role: "user", content: "Say it again" };

/** The first answer's messages, as the SDK gives them for the conversation to go on. */
async function firstAnswer(stream: boolean, apiKey = world.key): Promise<{ text: string; messages: ModelMessage[] }> {
  const ask = { model: modelFor(world, "openai.responses", MODELS.anthropic, apiKey), messages: [firstTurn], maxRetries: 0 };
  if (!stream) {
    const result = await generateText(ask);
    return { text: result.text, messages: result.response.messages };
  }
  const result = streamText(ask);
  return { text: await result.text, messages: (await result.response).messages };
}

describe("the assistant's earlier text, sent back by reference", () => {
  test.each([["whole"], ["streamed"]])("a %s answer's text reaches the upstream in the next turn", async (how) => {
    const first = await firstAnswer(how === "streamed");
    expect(first.text).toBe(expectedOf("anthropic", how === "streamed" ? "stream" : "plain").text);
    const next = await generateText({ model: modelFor(world, "openai.responses", MODELS.anthropic), messages: [firstTurn, ...first.messages, secondTurn], maxRetries: 0 });
    expect(next.text).toBe(expectedOf("anthropic", "plain").text);
    const [, sent] = requestsOf(world, "anthropic", 2);
    expect(sent.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent.messages[1].content).toEqual([{ type: "text", text: first.text }]);
  });

  test("another user's key finds nothing by the same reference: a 400 naming it", async () => {
    const first = await firstAnswer(false);
    const { key: stranger } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 });
    const error = await rejectionOf(generateText({ model: modelFor(world, "openai.responses", MODELS.anthropic, stranger), messages: [firstTurn, ...first.messages, secondTurn], maxRetries: 0 }));
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain("item_reference");
    expect(error.responseBody).toContain('"param":"input[1]"');
    // Refused before any upstream was asked.
    requestsOf(world, "anthropic", 1);
  });

  test("input_tokens counts a referred item as the item itself", async () => {
    const answered = await world.gw.fetch("/v1/responses", { method: "POST", headers: bearer(world.key), body: JSON.stringify({ model: MODELS.mock, input: "Hello" }) });
    const message = (await answered.json()).output.find((item: any) => item.type === "message");
    const count = async (item: unknown) => {
      const response = await world.gw.fetch("/v1/responses/input_tokens", { method: "POST", headers: bearer(world.key), body: JSON.stringify({ model: MODELS.mock, input: [{ role: "user", content: "Hello" }, item] }) });
      expect(response.status).toBe(200);
      return (await response.json()).input_tokens;
    };
    const inline = await count(message);
    expect(inline).toBeGreaterThan(await count({ role: "user", content: "" }));
    expect(await count({ type: "item_reference", id: message.id })).toBe(inline);
  });

  test("store: false keeps nothing, as OpenAI stores nothing then, and the SDK sends the text itself", async () => {
    const response = await world.gw.fetch("/v1/responses", { method: "POST", headers: bearer(world.key), body: JSON.stringify({ model: MODELS.mock, input: "Hello", store: false }) });
    expect(response.status).toBe(200);
    const message = (await response.json()).output.find((item: any) => item.type === "message");
    const referred = await world.gw.fetch("/v1/responses", {
      method: "POST",
      headers: bearer(world.key),
      body: JSON.stringify({ model: MODELS.mock, input: [{ role: "user", content: "Hello" }, { type: "item_reference", id: message.id }] }),
    });
    expect(referred.status).toBe(400);
    expect((await referred.json()).error).toMatchObject({ type: "invalid_request_error", code: 400 });

    const notStored = { openai: { store: false } };
    const first = await generateText({ model: modelFor(world, "openai.responses", MODELS.mock), messages: [firstTurn], providerOptions: notStored, maxRetries: 0 });
    const next = await generateText({ model: modelFor(world, "openai.responses", MODELS.mock), messages: [firstTurn, ...first.response.messages, secondTurn], providerOptions: notStored, maxRetries: 0 });
    expect(next.text).toContain("Say it again");
  });
});

describe("a conversation held by providerOptions.openai.previousResponseId", () => {
  test.each([["whole"], ["streamed"]])("after a %s answer, the next turn sends only its message and the upstream gets the whole conversation", async (how) => {
    const ask = { model: modelFor(world, "openai.responses", MODELS.anthropic), messages: [firstTurn], maxRetries: 0 };
    const first = how === "streamed" ? streamText(ask) : await generateText(ask);
    const [text, metadata] = await Promise.all([first.text, first.providerMetadata]);
    const previousResponseId = metadata?.openai?.responseId as string;
    expect(previousResponseId).toMatch(/^resp_/);
    const next = await generateText({ ...ask, messages: [secondTurn], providerOptions: { openai: { previousResponseId } } });
    expect(next.text).toBe(expectedOf("anthropic", "plain").text);
    const [, sent] = requestsOf(world, "anthropic", 2);
    expect(sent.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent.messages[1].content).toEqual([{ type: "text", text }]);
    expect(JSON.stringify(sent.messages[2].content)).toContain("Say it again");
  });
});
