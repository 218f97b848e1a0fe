import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Content } from "@google/genai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { MODELS, onlyRequest, postJson, startWorld, warningsOf, type World } from "./_support.ts";

/**
 * A caller of the upstream's own format has its body laid over the translation, so what the
 * translation could not carry goes upstream as the caller sent it: such a caller is told of no
 * loss. The same body from a caller of another format, whose body is not laid over it, still
 * names what was lost.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hello = [{ role: "user" as const, content: "Hello" }];
/** An object schema left open: OpenAI's strict mode takes only closed ones that require every property. */
const openSchema = { type: "object", properties: { city: { type: "string" } } };

describe("openai caller, openai channel", () => {
  test("a strict tool with an open schema goes as sent, with no warning", async () => {
    // An OpenAI-compatible server that takes such a schema (OpenAI's own refuses it, as the caller's to learn).
    world.upstreams.openai.setBehavior({ script: () => Response.json(jsonFixture("openai-chat-completion-tools.json")) });
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters: openSchema, strict: true } }];
    const { response } = await world.openai.chat.completions.create({ model: MODELS.openai, messages: hello, tools }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "openai").body.tools[0].function.strict).toBe(true);
  });

  test("an anthropic caller's like tool is sent as guidance, said so", async () => {
    const tools = [{ name: "lookup", input_schema: openSchema as { type: "object" }, strict: true }];
    const { response } = await world.anthropic.beta.messages.create({ model: MODELS.openai, max_tokens: 50, messages: hello, tools }).withResponse();
    expect(warningsOf(response)).toContain("strict (tool lookup): not held to the schema");
    expect(onlyRequest(world, "openai").body.tools[0].function).not.toHaveProperty("strict");
  });
});

describe("anthropic caller, anthropic channel", () => {
  const thinking = { type: "enabled" as const, budget_tokens: 2048 };
  const lookup = { name: "lookup", input_schema: { type: "object" as const, properties: {} } };

  test("a whitespace stop sequence, and a forced tool call beside thinking, go as sent, with no warning", async () => {
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.anthropic, max_tokens: 4096, messages: hello, stop_sequences: ["\n", "END"], thinking, tools: [lookup], tool_choice: { type: "any" } })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.stop_sequences).toEqual(["\n", "END"]);
    expect(sent.thinking).toEqual(thinking);
  });

  test("a thinking budget at max_tokens goes as sent, with no warning", async () => {
    const { response } = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 2048, messages: hello, thinking }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual(thinking);
  });

  test("an openai caller's like request loses each of those, said so", async () => {
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object", properties: {} } } }];
    const { response } = await world.openai.chat.completions
      .create({ model: MODELS.anthropic, messages: hello, stop: ["\n", "END"], reasoning_effort: "low", tools, tool_choice: "required" })
      .withResponse();
    expect(warningsOf(response)).toContain("stop: \"\\n\" not sent");
    expect(warningsOf(response)).toContain("reasoning: not passed on: the upstream does not think before a tool call the request forces");
  });
});

describe("gemini caller, gemini channel", () => {
  /** A system instruction and a conversation of nothing the canonical form carries: the model's earlier run of code. */
  const ranCode = {
    systemInstruction: "Be brief.",
    contents: [{ role: "model", parts: [{ codeExecutionResult: { outcome: "OUTCOME_OK", output: "4" } }] }],
  };

  test("a system instruction beside contents of the model's own work goes as sent, with no warning", async () => {
    const contents = ranCode.contents as Content[];
    const response = await world.genai.models.generateContent({ model: MODELS.gemini, contents, config: { systemInstruction: ranCode.systemInstruction } });
    expect(response.sdkHttpResponse?.headers?.["x-gateway-warnings"]).toBeUndefined();
    const sent = onlyRequest(world, "gemini").body;
    expect(sent.contents).toEqual(ranCode.contents);
    expect(sent.systemInstruction.parts).toEqual([{ text: ranCode.systemInstruction }]);
  });

  test("an anthropic channel is sent the instruction as the one user turn, said so", async () => {
    const response = await postJson(world, `/v1beta/models/${MODELS.anthropic}:generateContent`, ranCode);
    expect(response.status).toBe(200);
    expect(warningsOf(response)).toContain("system messages alone, sent as the one user turn");
  });
});
