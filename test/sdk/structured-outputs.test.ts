import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Type } from "@google/genai";
import { jsonSchemaOutputFormat } from "@anthropic-ai/sdk/helpers/json-schema";
import { bearer } from "../helpers/gateway.ts";
import { anthropicAnswering, geminiAnswering, MODELS, openAiAnswering, WEATHER, onlyRequest, rejectionOf, startWorld, type World, warningsOf } from "./_support.ts";

/**
 * Structured outputs across formats: OpenAI's response_format json_schema and Anthropic's
 * output_config.format (the answer's text held to a JSON Schema), and strict tools (a call's
 * arguments held to the tool's schema), through the official SDKs, against loopback upstreams
 * that check the fields as the providers do.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hello = [{ role: "user" as const, content: "Where is the Eiffel Tower?" }];
const citySchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };


describe("openai caller -> anthropic upstream", () => {
  test("chat.completions.parse() with a json_schema response_format: output_config.format upstream, `parsed` the object", async () => {
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const { data, response } = await world.openai.chat.completions
      .parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } } })
      .withResponse();
    expect(data.choices[0]!.message.parsed as unknown).toEqual({ city: "Paris" });
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "anthropic").body;
    expect(body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
    expect(body).not.toHaveProperty("response_format");
  });

  test("streamed, the format goes upstream the same way", async () => {
    const response = await world.gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(world.key),
      body: JSON.stringify({ model: MODELS.anthropic, messages: hello, stream: true, response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema } } }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("data: [DONE]");
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
  });

  test("a schema that leaves objects open by default has them closed, as Anthropic requires; the caller's schema is otherwise as sent", async () => {
    const loose = {
      type: "object",
      properties: { city: { type: "string" }, where: { type: "object", properties: { lat: { type: "number" } } }, tags: { type: "array", items: { type: "object", properties: { tag: { type: "string" } } } } },
      required: ["city"],
    };
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const completion = await world.openai.chat.completions.parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: loose } } });
    expect(completion.choices[0]!.message.parsed as unknown).toEqual({ city: "Paris" });
    expect(onlyRequest(world, "anthropic").body.output_config.format.schema).toEqual({
      type: "object",
      properties: {
        city: { type: "string" },
        where: { type: "object", properties: { lat: { type: "number" } }, additionalProperties: false },
        tags: { type: "array", items: { type: "object", properties: { tag: { type: "string" } }, additionalProperties: false } },
      },
      required: ["city"],
      additionalProperties: false,
    });
  });

  test("a schema Anthropic refuses (an object left open on purpose) is the upstream's 400, to the caller as a 400", async () => {
    const open = { type: "object", properties: { city: { type: "string" } }, additionalProperties: true };
    const error = await rejectionOf(
      world.openai.chat.completions.parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: open } } }),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: 400 });
    expect(error.error.message).toContain("'additionalProperties: true' is not supported");
    expect(onlyRequest(world, "anthropic").body.output_config.format.schema).toEqual(open);
  });

  test("json_object, which has no Anthropic equivalent without a schema, is still named in x-gateway-warnings", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_object" } }).withResponse();
    expect(warningsOf(response)).toContain("response_format: the upstream holds answers to JSON only against a schema");
    expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("output_config");
  });
});

describe("anthropic caller -> openai and gemini upstreams", () => {
  /** The SDK's own helper: it closes the schema's objects and parses the answer into parsed_output. */
  const cityFormat = () => jsonSchemaOutputFormat({ type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const);

  test("messages.parse() on an openai channel: response_format json_schema, strict, named; parsed_output the object", async () => {
    world.upstreams.openai.setBehavior({ completion: openAiAnswering('{"city":"Paris"}') });
    const data = await world.anthropic.messages.parse({ model: MODELS.openai, max_tokens: 100, messages: hello, output_config: { format: cityFormat() } });
    expect(data.parsed_output).toEqual({ city: "Paris" });
    expect(data.stop_reason).toBe("end_turn");
    expect(onlyRequest(world, "openai").body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema: citySchema, strict: true } });
  });

  test("messages.parse() on a gemini channel: responseMimeType application/json and responseJsonSchema; parsed_output the object", async () => {
    world.upstreams.gemini.setBehavior({ response: geminiAnswering('{"city":"Paris"}') });
    const data = await world.anthropic.messages.parse({ model: MODELS.gemini, max_tokens: 100, messages: hello, output_config: { format: cityFormat() } });
    expect(data.parsed_output).toEqual({ city: "Paris" });
    const config = onlyRequest(world, "gemini").body.generationConfig;
    expect(config.responseMimeType).toBe("application/json");
    expect(config.responseJsonSchema).toEqual(citySchema);
  });

  test("streamed to an openai channel, the format goes the same way, with no warning", async () => {
    const stream = world.anthropic.messages.stream({ model: MODELS.openai, max_tokens: 100, messages: hello, output_config: { format: { type: "json_schema", schema: citySchema } } });
    stream.on("error", () => {});
    const { response } = await stream.withResponse();
    await stream.done();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "openai").body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema: citySchema, strict: true } });
  });

  test("output_config.effort goes as the openai upstream's reasoning_effort, beside the format, with no warning", async () => {
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 100, messages: hello, output_config: { effort: "low", format: { type: "json_schema", schema: citySchema } } })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "openai").body;
    expect(body).not.toHaveProperty("output_config");
    expect(body.reasoning_effort).toBe("low");
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema: citySchema, strict: true } });
  });

  test("an anthropic upstream gets output_config as sent, effort and all, with no warning", async () => {
    const outputConfig = { effort: "low" as const, format: { type: "json_schema" as const, schema: citySchema } };
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const { response } = await world.anthropic.messages.create({ model: MODELS.anthropic, max_tokens: 100, messages: hello, output_config: outputConfig }).withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual(outputConfig);
  });

  test("a schema with an optional property, which OpenAI's strict mode refuses, is sent without strict and named in x-gateway-warnings", async () => {
    // Anthropic's structured outputs take optional properties; OpenAI's strict mode answers such a schema with a 400.
    const optional = { type: "object", properties: { city: { type: "string" }, country: { type: "string" } }, required: ["city"], additionalProperties: false };
    world.upstreams.openai.setBehavior({ completion: openAiAnswering('{"city":"Paris"}') });
    const { data, response } = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 100, messages: hello, output_config: { format: { type: "json_schema", schema: optional } } })
      .withResponse();
    expect(data.content.map((block) => (block.type === "text" ? block.text : block.type))).toEqual(['{"city":"Paris"}']);
    expect(warningsOf(response)).toContain("strict (response schema): not held to the schema");
    expect(onlyRequest(world, "openai").body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema: optional } });
  });

  test("a format of another type is refused with a 400 naming the field, before any upstream is asked", async () => {
    const response = await world.gw.fetch("/v1/messages", {
      method: "POST",
      headers: bearer(world.key),
      body: JSON.stringify({ model: MODELS.openai, max_tokens: 100, messages: hello, output_config: { format: { type: "text" } } }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("output_config.format.type");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });
});

describe("gemini caller -> anthropic upstream", () => {
  test("responseJsonSchema becomes output_config.format", async () => {
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const response = await world.genai.models.generateContent({
      model: MODELS.anthropic,
      contents: "Where is the Eiffel Tower?",
      config: { responseMimeType: "application/json", responseJsonSchema: citySchema },
    });
    expect(JSON.parse(response.text!)).toEqual({ city: "Paris" });
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
  });

  test("responseSchema, which cannot say additionalProperties, reaches it with its objects closed", async () => {
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    await world.genai.models.generateContent({
      model: MODELS.anthropic,
      contents: "Where is the Eiffel Tower?",
      config: { responseMimeType: "application/json", responseSchema: { type: "OBJECT" as any, properties: { city: { type: "STRING" as any } }, required: ["city"] } },
    });
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
  });
});

describe("gemini caller -> openai upstream: Gemini holds every answer to its schema, so the answer is asked strict", () => {
  const ask = (config: Record<string, unknown>) =>
    world.genai.models.generateContent({ model: MODELS.openai, contents: "Where is the Eiffel Tower?", config: { responseMimeType: "application/json", ...config } });

  test("a responseJsonSchema that OpenAI's strict mode takes is sent strict, with no warning", async () => {
    world.upstreams.openai.setBehavior({ completion: openAiAnswering('{"city":"Paris"}') });
    const response = await ask({ responseJsonSchema: citySchema });
    expect(JSON.parse(response.text!)).toEqual({ city: "Paris" });
    expect(onlyRequest(world, "openai").body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema: citySchema, strict: true } });
    expect(response.sdkHttpResponse?.headers?.["x-gateway-warnings"]).toBeUndefined();
  });

  test("a responseSchema, whose objects stay open, is sent as guidance, and x-gateway-warnings says it is not held to the schema", async () => {
    const response = await ask({ responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] } });
    expect(onlyRequest(world, "openai").body.response_format.json_schema.strict).toBeUndefined();
    expect(response.sdkHttpResponse?.headers?.["x-gateway-warnings"]).toContain("strict (response schema): not held to the schema");
  });
});

describe("Gemini's OpenAPI-subset schemas as JSON Schema", () => {
  test("nullable becomes a null type (and a null in an enum), propertyOrdering is left out, and a property named like a keyword stays", async () => {
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":null}') });
    await world.genai.models.generateContent({
      model: MODELS.anthropic,
      contents: "Where is the Eiffel Tower?",
      config: {
        responseMimeType: "application/json",
        responseSchema: {
          type: Type.OBJECT,
          properties: {
            city: { type: Type.STRING, nullable: true },
            unit: { type: Type.STRING, enum: ["c", "f"], nullable: true },
            nullable: { type: Type.BOOLEAN },
            tags: { type: Type.ARRAY, items: { type: Type.INTEGER, nullable: true } },
          },
          propertyOrdering: ["city", "unit", "nullable", "tags"],
          required: ["city"],
        },
      },
    });
    const schema = onlyRequest(world, "anthropic").body.output_config.format.schema;
    expect(schema.propertyOrdering).toBeUndefined();
    expect(schema.properties).toEqual({
      city: { type: ["string", "null"] },
      unit: { type: ["string", "null"], enum: ["c", "f", null] },
      nullable: { type: "boolean" },
      tags: { type: "array", items: { type: ["integer", "null"] } },
    });
  });

  test("a function's parameters reach an openai upstream the same way", async () => {
    await world.genai.models.generateContent({
      model: MODELS.openai,
      contents: "Weather?",
      config: { tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING, nullable: true } } } }] }] },
    });
    const [tool] = onlyRequest(world, "openai").body.tools;
    expect(tool.function.parameters.properties.city).toEqual({ type: ["string", "null"] });
  });
});

describe("strict tools", () => {
  /** The weather tool's schema as both providers' strict modes take it: closed, every property required. */
  const strictWeather = { ...WEATHER.parameters, required: ["location", "unit"], additionalProperties: false };

  test("openai caller -> anthropic upstream: chat.completions.parse() with a strict function; the Anthropic tool is strict, the call's arguments parsed", async () => {
    const { data, response } = await world.openai.chat.completions
      .parse({
        model: MODELS.anthropic,
        messages: hello,
        tools: [{ type: "function", function: { name: WEATHER.name, description: WEATHER.description, parameters: strictWeather, strict: true } }],
      })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const [call] = (data.choices[0]!.message.tool_calls ?? []) as { function: { parsed_arguments: unknown } }[];
    expect(call!.function.parsed_arguments).toEqual({ location: "Paris, France", unit: "celsius" });
    expect(onlyRequest(world, "anthropic").body.tools).toEqual([{ name: WEATHER.name, description: WEATHER.description, input_schema: strictWeather, strict: true }]);
  });

  test("anthropic caller -> openai upstream: the tool's strict becomes the function's strict", async () => {
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 100, messages: hello, tools: [{ name: WEATHER.name, description: WEATHER.description, input_schema: strictWeather as any, strict: true }] })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    expect(onlyRequest(world, "openai").body.tools).toEqual([{ type: "function", function: { name: WEATHER.name, description: WEATHER.description, parameters: strictWeather, strict: true } }]);
  });

  test("openai caller -> anthropic upstream: a strict function without parameters gets a closed empty schema, as Anthropic's strict tools need", async () => {
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, tools: [{ type: "function", function: { name: "get_time", strict: true } }] });
    expect(onlyRequest(world, "anthropic").body.tools[0]).toEqual({ name: "get_time", input_schema: { type: "object", properties: {}, additionalProperties: false }, strict: true });
  });

  test("anthropic caller -> openai upstream: a strict tool with an optional input is sent without strict and named in x-gateway-warnings", async () => {
    const optionalUnit = { ...WEATHER.parameters, required: ["location"], additionalProperties: false };
    const { response } = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 100, messages: hello, tools: [{ name: WEATHER.name, input_schema: optionalUnit as any, strict: true }] })
      .withResponse();
    expect(warningsOf(response)).toContain("strict (tool get_weather): not held to the schema");
    expect(onlyRequest(world, "openai").body.tools[0].function).not.toHaveProperty("strict");
  });

  test("a tool that is not strict stays so both ways", async () => {
    await world.anthropic.messages.create({ model: MODELS.openai, max_tokens: 100, messages: hello, tools: [{ name: WEATHER.name, input_schema: WEATHER.parameters as any }] });
    expect(onlyRequest(world, "openai").body.tools[0].function).not.toHaveProperty("strict");
    await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, tools: [{ type: "function", function: { name: WEATHER.name, parameters: WEATHER.parameters as any, strict: false } }] });
    expect(onlyRequest(world, "anthropic").body.tools[0]).not.toHaveProperty("strict");
  });

  test("openai caller -> gemini upstream, which has no strict tools: named in x-gateway-warnings", async () => {
    const { response } = await world.openai.chat.completions
      .create({ model: MODELS.gemini, messages: hello, tools: [{ type: "function", function: { name: WEATHER.name, parameters: strictWeather, strict: true } }] })
      .withResponse();
    expect(warningsOf(response)).toContain("strict (tool get_weather): not supported by the upstream");
  });
});

describe("openai SDK, responses.parse() with text.format json_schema", () => {
  const answering = { openai: () => ({ completion: openAiAnswering('{"city":"Paris"}') }), anthropic: () => ({ message: anthropicAnswering('{"city":"Paris"}') }), gemini: () => ({ response: geminiAnswering('{"city":"Paris"}') }) };
  const text = { format: { type: "json_schema" as const, name: "city", schema: citySchema, strict: true } };

  test.each(["openai", "anthropic", "gemini"] as const)("%s upstream: held to the schema in its own form, output_parsed the object", async (kind) => {
    world.upstreams[kind].setBehavior(answering[kind]());
    const response = await world.openai.responses.parse({ model: MODELS[kind], input: hello, text });
    expect(response.output_parsed as unknown).toEqual({ city: "Paris" });
    const body = onlyRequest(world, kind).body;
    if (kind === "openai") expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } });
    if (kind === "anthropic") expect(body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
    if (kind === "gemini") expect(body.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: citySchema });
  });

  test("mock upstream: the format is accepted and echoed in the Response", async () => {
    const response = await world.openai.responses.create({ model: MODELS.mock, input: hello, text });
    expect(response.status).toBe("completed");
    expect(response.text).toEqual(text);
  });

  test("json_object reaches an openai upstream as response_format json_object", async () => {
    await world.openai.responses.create({ model: MODELS.openai, input: "Answer in JSON", text: { format: { type: "json_object" } } });
    expect(onlyRequest(world, "openai").body.response_format).toEqual({ type: "json_object" });
  });
});
