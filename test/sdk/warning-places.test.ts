import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { MODELS, onlyRequest, postJson, startWorld, warningsOf, type World } from "./_support.ts";

/**
 * A warning names an item of the conversation where the caller put it, in its own field: the
 * gateway's canonical messages are numbered otherwise (a top-level system prompt is the first
 * of them, a turn of tool results and words is two, a function call joins the answer before it).
 * An OpenAI chat caller's messages are numbered as its own (see warnings.test.ts).
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const MOVED = "a system message after the conversation began, moved to the top";
const lookup = { name: "lookup", input_schema: { type: "object" as const, properties: {} } };

test("anthropic caller: a system message among the turns is named by its index in `messages`, past a system prompt and a turn of results and words", async () => {
  const messages = [
    { role: "user", content: "Look it up." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }, { type: "text", text: "Thanks." }] },
    { role: "system", content: "Answer in French." },
    { role: "user", content: "And now?" },
  ];
  const { response } = await world.anthropic.beta.messages
    .create({ model: MODELS.gemini, max_tokens: 50, system: "Be brief.", messages, tools: [lookup], betas: ["mid-conversation-system-2026-04-07"] } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming)
    .withResponse();
  expect(warningsOf(response)).toContain(`; messages[3]: ${MOVED}`);
  expect(warningsOf(response)).not.toContain("messages[5]");
  expect(onlyRequest(world, "gemini").body.systemInstruction.parts[0].text).toBe("Be brief.\n\nAnswer in French.");
});

test("responses caller: a developer item after the conversation began is named by its index in `input`, past instructions and a function call", async () => {
  const input: OpenAI.Responses.ResponseInput = [
    { role: "user", content: "Look it up." },
    { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
    { type: "function_call_output", call_id: "call_1", output: "found" },
    { role: "developer", content: "Answer in French." },
    { role: "user", content: "And now?" },
  ];
  const tools: OpenAI.Responses.Tool[] = [{ type: "function", name: "lookup", parameters: { type: "object", properties: {} }, strict: false }];
  const { response } = await world.openai.responses.create({ model: MODELS.anthropic, instructions: "Be brief.", input, tools, store: false }).withResponse();
  expect(warningsOf(response)).toBe(`input[3]: ${MOVED}: the upstream takes one system prompt`);
  expect(onlyRequest(world, "anthropic").body.system).toBe("Be brief.\n\nAnswer in French.");
});

test("responses caller: a developer item of the conversation continued is named as previous_response_id, and one of `input` by its own index", async () => {
  const { data: first, response: opening } = await world.openai.responses
    .create({ model: MODELS.anthropic, input: [{ role: "user", content: "Hello" }, { role: "developer", content: "Answer in French." }] })
    .withResponse();
  expect(warningsOf(opening)).toContain(`input[1]: ${MOVED}`);
  const { response } = await world.openai.responses
    .create({ model: MODELS.anthropic, previous_response_id: first.id, input: [{ role: "developer", content: "Be brief." }, { role: "user", content: "And now?" }], store: false })
    .withResponse();
  expect(warningsOf(response)).toContain(`previous_response_id: ${MOVED}`);
  expect(warningsOf(response)).toContain(`input[0]: ${MOVED}`);
  expect(warningsOf(response)).not.toContain("messages[");
});

test("gemini caller: a system instruction without a turn to go with it is named as `contents`", async () => {
  const response = await postJson(world, `/v1beta/models/${MODELS.anthropic}:generateContent`, {
    systemInstruction: "Be brief.",
    contents: [{ role: "model", parts: [{ codeExecutionResult: { outcome: "OUTCOME_OK", output: "4" } }] }],
  });
  expect(response.status).toBe(200);
  expect(warningsOf(response)).toContain("contents: system messages alone, sent as the one user turn");
});
