import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { MODELS, onlyRequest, openAiWeatherTool, startWorld, type World } from "./_support.ts";

/**
 * The tool forms current OpenAI SDKs send besides plain function tools: `allowed_tools`
 * (a tool_choice that narrows the tools a call may use while the list stays whole, for the
 * prompt cache) and custom tools (free-form input, optionally held to a grammar). An openai
 * upstream gets them as sent; another format gets `allowed_tools` as the allowed tools alone,
 * and custom tools, which it has no way to define, keep the request to openai channels.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const timeTool = {
  type: "function" as const,
  function: { name: "get_time", description: "Current time in a timezone", parameters: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] } },
};
const question = [{ role: "user" as const, content: "What time is it in Paris?" }];
/** Both tools defined; only get_time allowed, and a call required. */
const onlyTime = {
  tools: [openAiWeatherTool, timeTool],
  tool_choice: { type: "allowed_tools" as const, allowed_tools: { mode: "required" as const, tools: [{ type: "function", function: { name: "get_time" } }] } },
};

describe("tool_choice allowed_tools", () => {
  test("an openai upstream gets the tools and the choice as sent", async () => {
    await world.openai.chat.completions.create({ model: MODELS.openai, messages: question, ...onlyTime });
    const body = onlyRequest(world, "openai").body;
    expect(body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "get_time"]);
    expect(body.tool_choice).toEqual(onlyTime.tool_choice);
  });

  test("an anthropic upstream is offered only the allowed tool, a call required", async () => {
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question, ...onlyTime });
    const body = onlyRequest(world, "anthropic").body;
    expect(body.tools.map((t: any) => t.name)).toEqual(["get_time"]);
    expect(body.tool_choice).toEqual({ type: "any" });
  });

  test("a gemini upstream is offered only the allowed function, mode ANY", async () => {
    await world.openai.chat.completions.create({ model: MODELS.gemini, messages: question, ...onlyTime });
    const body = onlyRequest(world, "gemini").body;
    expect(body.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(["get_time"]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
  });

  test("the mock calls the allowed tool, not the first one defined", async () => {
    const completion = await world.openai.chat.completions.create({ model: MODELS.mock, messages: question, ...onlyTime });
    const calls = completion.choices[0]!.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? c.function.name : c.type))).toEqual(["get_time"]);
  });
});

describe("custom tools", () => {
  const grammarTool = {
    type: "custom" as const,
    custom: { name: "run_sql", description: "Runs one SQL query", format: { type: "grammar" as const, grammar: { syntax: "regex" as const, definition: "^SELECT .+$" } } },
  };

  test("an openai upstream gets the tool, and on the next turn the custom call and its result, as sent", async () => {
    const call = { id: "call_sql1", type: "custom" as const, custom: { name: "run_sql", input: "SELECT 1" } };
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      ...question,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "call_sql1", content: "1" },
    ];
    await world.openai.chat.completions.create({ model: MODELS.openai, messages, tools: [grammarTool], tool_choice: { type: "custom", custom: { name: "run_sql" } } });
    const body = onlyRequest(world, "openai").body;
    expect(body.tools).toEqual([grammarTool]);
    expect(body.tool_choice).toEqual({ type: "custom", custom: { name: "run_sql" } });
    expect(body.messages[1].tool_calls).toEqual([call]);
  });

  test("a model with only an anthropic channel: 400 naming the tool, and no upstream call", async () => {
    const error = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: question, tools: [openAiWeatherTool, grammarTool] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("tools[1] (custom)");
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
  });
});
