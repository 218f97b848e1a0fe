import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { FunctionCallingConfigMode, Type, type Content } from "@google/genai";
import { genaiWeatherTool, MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** A generateContent call with one function declared, straight over HTTP (the SDK checks nothing of names). */
function generateWithFunction(name: string): Promise<Response> {
  return world.gw.fetch(`/v1beta/models/${MODELS.gemini}:generateContent`, {
    method: "POST",
    headers: { "x-goog-api-key": world.key, "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "go" }] }], tools: [{ functionDeclarations: [{ name, description: "d" }] }] }),
  });
}

test("an Anthropic tool schema with const, type arrays and $ref reaches Gemini whole, as JSON Schema (parametersJsonSchema), which its OpenAPI-subset parameters would refuse", async () => {
  const schema = {
    type: "object" as const,
    properties: { kind: { const: "city" }, name: { type: ["string", "null"] }, at: { $ref: "#/$defs/point" } },
    required: ["kind", "at"],
    additionalProperties: false,
    $defs: { point: { type: "object", properties: { lat: { type: "number" }, lon: { type: "number" } } } },
  };
  await world.anthropic.messages.create({ model: MODELS.gemini, max_tokens: 64, messages: [{ role: "user", content: "where?" }], tools: [{ name: "locate", description: "d", input_schema: schema }] });
  const declaration = onlyRequest(world, "gemini").body.tools[0].functionDeclarations[0];
  expect(declaration).toEqual({ name: "locate", description: "d", parametersJsonSchema: schema });
});

describe("tool names as long and as varied as each provider takes", () => {
  test("a 100-character MCP-style name reaches an anthropic channel; 129 characters are a 400", async () => {
    const name = `mcp__github_enterprise_server__${"list_review_comments_".repeat(4)}`.slice(0, 100);
    const tool = (toolName: string) => ({ name: toolName, description: "d", input_schema: { type: "object" as const, properties: {} } });
    const message = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "go" }], tools: [tool(name)] });
    expect(message.type).toBe("message");
    expect(onlyRequest(world, "anthropic").body.tools[0].name).toBe(name);
    const refused = await world.anthropic.messages
      .create({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "go" }], tools: [tool("x".repeat(129))] })
      .then(() => null, (error: { status?: number }) => error);
    expect(refused?.status).toBe(400);
  });

  test("Gemini function names with ':' and of 128 characters reach a gemini channel; 129 are a 400", async () => {
    for (const name of ["github:create_issue", `f_${"x".repeat(126)}`]) {
      const response = await generateWithFunction(name);
      expect(response.status).toBe(200);
      expect(onlyRequest(world, "gemini").body.tools[0].functionDeclarations[0].name).toBe(name);
      world.reset();
    }
    const refused = await generateWithFunction("x".repeat(129));
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain("1-128");
  });
});

describe("a Gemini history that calls one function twice without ids (as Google's parallel-calling guide builds it)", () => {
  const contents: Content[] = [
    { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
    { role: "model", parts: [{ functionCall: { name: "get_weather", args: { location: "Paris" } } }, { functionCall: { name: "get_weather", args: { location: "Rome" } } }] },
    {
      role: "user",
      parts: [
        { functionResponse: { name: "get_weather", response: { temperature: 18 } } },
        { functionResponse: { name: "get_weather", response: { temperature: 25 } } },
      ],
    },
  ];

  test("for Anthropic, each tool_use has its own id and each result answers its call, in order", async () => {
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents, config: { tools: [genaiWeatherTool] } });
    const { messages } = onlyRequest(world, "anthropic").body;
    const calls = messages[1].content.filter((block: { type: string }) => block.type === "tool_use");
    const results = messages[2].content.filter((block: { type: string }) => block.type === "tool_result");
    expect(calls.map((call: { id: string }) => call.id)).toEqual(["get_weather", "get_weather_2"]);
    expect(calls.map((call: { input: { location: string } }) => call.input.location)).toEqual(["Paris", "Rome"]);
    expect(results.map((result: { tool_use_id: string }) => result.tool_use_id)).toEqual(["get_weather", "get_weather_2"]);
  });

  test("for OpenAI, the same ids pair each tool message with its call", async () => {
    await world.genai.models.generateContent({ model: MODELS.openai, contents, config: { tools: [genaiWeatherTool] } });
    const { messages } = onlyRequest(world, "openai").body;
    const callIds = messages[1].tool_calls.map((call: { id: string }) => call.id);
    expect(new Set(callIds).size).toBe(2);
    expect(messages.slice(2).map((message: { tool_call_id: string }) => message.tool_call_id)).toEqual(callIds);
  });

  test("an id-less call of a name with other characters gets an id of letters, digits, _ and - (what Anthropic and OpenAI take in ids)", async () => {
    const dotted: Content[] = [
      { role: "user", parts: [{ text: "go" }] },
      { role: "model", parts: [{ functionCall: { name: "github:create_issue", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "github:create_issue", response: { ok: true } } }] },
    ];
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: dotted, config: { tools: [{ functionDeclarations: [{ name: "github:create_issue", description: "d" }] }] } });
    const { messages } = onlyRequest(world, "anthropic").body;
    expect(messages[1].content[0]).toMatchObject({ type: "tool_use", id: "github_create_issue", name: "github:create_issue" });
    expect(messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "github_create_issue" });
  });
});

describe("Gemini's function calling modes for the other formats", () => {
  const declaration = (name: string) => ({ name, description: name, parameters: { type: Type.OBJECT, properties: { x: { type: Type.STRING } } } });
  const tools = [{ functionDeclarations: [declaration("a"), declaration("b"), declaration("c")] }];

  test("ANY with two of three allowed: only those two are offered, and a call is required", async () => {
    const config = { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ["b", "c"] } } };
    await world.genai.models.generateContent({ model: MODELS.openai, contents: "go", config });
    const openai = onlyRequest(world, "openai").body;
    expect(openai.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(["b", "c"]);
    expect(openai.tool_choice).toBe("required");
    world.reset();
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "go", config });
    const anthropic = onlyRequest(world, "anthropic").body;
    expect(anthropic.tools.map((tool: { name: string }) => tool.name)).toEqual(["b", "c"]);
    expect(anthropic.tool_choice).toEqual({ type: "any" });
  });

  test("VALIDATED lets the model answer in text: auto, not a forced call", async () => {
    const config = { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.VALIDATED } } };
    await world.genai.models.generateContent({ model: MODELS.openai, contents: "just say hi", config });
    const openai = onlyRequest(world, "openai").body;
    expect(openai.tool_choice).toBe("auto");
    expect(openai.tools).toHaveLength(3);
    world.reset();
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: "just say hi", config });
    expect(onlyRequest(world, "anthropic").body.tool_choice).toEqual({ type: "auto" });
  });
});
