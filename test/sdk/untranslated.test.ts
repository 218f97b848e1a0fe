import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { ApiError } from "@google/genai";
import { createChannel, MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

/**
 * Content the canonical form does not carry (thinking blocks, documents, audio, server tools,
 * code execution): a same-format upstream receives it as the caller sent it; for another
 * format, replayed reasoning is left out with a warning, and input the upstream could not
 * read refuses the request with 400 (a model with a channel of the caller's format uses it).
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** An assistant turn as Anthropic returns it with extended thinking and a tool call, sent back with its result. */
const thinkingHistory = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: 2048,
  thinking: { type: "enabled", budget_tokens: 1024 },
  tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
  messages: [
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants the weather.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      ] as any,
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18 C" }] },
  ],
});

const pdfDocument = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" } };

describe("anthropic caller", () => {
  test("to an anthropic upstream: thinking and redacted_thinking blocks, documents and server tools reach it as sent", async () => {
    await world.anthropic.messages.create(thinkingHistory(MODELS.anthropic));
    const sent = onlyRequest(world, "anthropic").body;
    expect(sent.messages[1].content.map((b: { type: string }) => b.type)).toEqual(["thinking", "redacted_thinking", "tool_use"]);
    expect(sent.messages[1].content[0].signature).toBe("sig-abc");

    world.reset();
    await world.anthropic.messages.create({
      model: MODELS.anthropic,
      max_tokens: 64,
      tools: [{ type: "web_search_20250305", name: "web_search" } as any],
      messages: [{ role: "user", content: [pdfDocument as any, { type: "text", text: "Summarise this." }] }],
    });
    const withDocument = onlyRequest(world, "anthropic").body;
    expect(withDocument.messages[0].content[0]).toEqual(pdfDocument);
    expect(withDocument.tools).toEqual([{ type: "web_search_20250305", name: "web_search" }]);
  });

  test("anthropic-beta reaches an anthropic upstream", async () => {
    await world.anthropic.beta.messages.create({
      model: MODELS.anthropic,
      max_tokens: 64,
      betas: ["token-efficient-tools-2025-02-19"],
      messages: [{ role: "user", content: "Hello" }],
    });
    expect(onlyRequest(world, "anthropic").headers["anthropic-beta"]).toBe("token-efficient-tools-2025-02-19");
  });

  test("to an openai upstream: the thinking blocks are left out, and the warning header says so", async () => {
    const { data, response } = await world.anthropic.messages.create(thinkingHistory(MODELS.openai)).withResponse();
    expect(data.type).toBe("message");
    const sent = onlyRequest(world, "openai").body;
    expect(JSON.stringify(sent)).not.toContain("The user wants the weather.");
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool"]);
    const warnings = response.headers.get("x-gateway-warnings")!;
    expect(warnings).toContain("messages[1].content[0] (thinking): left out");
    expect(warnings).toContain("messages[1].content[1] (redacted_thinking): left out");
  });

  test("a document or a server tool for a model with only an openai channel: 400 naming them, and no upstream call", async () => {
    const document = await world.anthropic.messages
      .create({ model: MODELS.openai, max_tokens: 64, messages: [{ role: "user", content: [pdfDocument as any] }] })
      .catch((e) => e);
    expect(document).toBeInstanceOf(Anthropic.BadRequestError);
    expect(document.message).toContain("messages[0].content[0] (document)");
    expect(document.message).toContain("anthropic");
    const serverTool = await world.anthropic.messages
      .create({ model: MODELS.gemini, max_tokens: 64, tools: [{ type: "web_search_20250305", name: "web_search" } as any], messages: [{ role: "user", content: "news?" }] })
      .catch((e) => e);
    expect(serverTool).toBeInstanceOf(Anthropic.BadRequestError);
    expect(serverTool.message).toContain("tools[0] (web_search_20250305)");
    expect(world.upstreams.openai.requests.length + world.upstreams.gemini.requests.length).toBe(0);
  });

  test("an image from Anthropic's Files API: sent as it is to an anthropic upstream; for an openai model a 400 naming it", async () => {
    const fileImage = { type: "image" as const, source: { type: "file" as const, file_id: "file_011CNha8iCJcU1wXNR6q4V8w" } };
    const ask = (model: string) => world.anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: "user", content: [fileImage, { type: "text", text: "What is this?" }] }] });
    await ask(MODELS.anthropic);
    expect(onlyRequest(world, "anthropic").body.messages[0].content[0]).toEqual(fileImage);
    const refused = await ask(MODELS.openai).catch((e) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused.message).toContain("messages[0].content[0] (an image from Anthropic's Files API)");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("a model served by an openai channel first and an anthropic one second: a document goes to the anthropic channel", async () => {
    const model = "untranslated-mixed";
    await createChannel(world.gw, { name: "mixed openai", type: "openai", base_url: world.upstreams.openai.url, api_key: "openai-upstream-key", models: [model], priority: 10 });
    const anthropicId = await createChannel(world.gw, {
      name: "mixed anthropic",
      type: "anthropic",
      base_url: world.upstreams.anthropic.url,
      api_key: "anthropic-upstream-key",
      models: [model],
      priority: 0,
    });
    const { response } = await world.anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: "user", content: [pdfDocument as any] }] }).withResponse();
    expect(response.headers.get("x-gateway-channel")).toBe(anthropicId);
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("an image a tool returned: sent to an anthropic upstream; for an openai-only model a 400 rather than a result without it", async () => {
    const screenshot = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" } };
    const request = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({
      model,
      max_tokens: 100,
      tools: [{ name: "screenshot", input_schema: { type: "object", properties: {} } }],
      messages: [
        { role: "user", content: "What is on my screen?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "screenshot", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "Here it is" }, screenshot] }] },
      ],
    });
    await world.anthropic.messages.create(request(MODELS.anthropic));
    expect(onlyRequest(world, "anthropic").body.messages[2].content[0].content[1]).toEqual(screenshot);

    const error = await world.anthropic.messages.create(request(MODELS.openai)).catch((e) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.message).toContain("messages[2].content[0].content[1] (image)");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("a malformed block of a known type is still refused", async () => {
    const error = await world.anthropic.messages
      .create({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: [{ type: "text" } as any] }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.message).toContain("messages[0].content[0].text");
  });
});

describe("openai caller", () => {
  const audioPart = { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } };

  test("to an openai upstream: input_audio and file parts reach it as sent", async () => {
    const filePart = { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0xLjQK" } };
    await world.openai.chat.completions.create({ model: MODELS.openai, messages: [{ role: "user", content: [audioPart, filePart] as any }] });
    expect(onlyRequest(world, "openai").body.messages[0].content).toEqual([audioPart, filePart]);
  });

  test("audio for a model with only an anthropic channel: 400", async () => {
    const error = await world.openai.chat.completions
      .create({ model: MODELS.anthropic, messages: [{ role: "user", content: [audioPart] as any }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("messages[0].content[0] (input_audio)");
  });

  test("an assistant's refusal part in history is left out for an anthropic upstream, with a warning", async () => {
    const { response } = await world.openai.chat.completions
      .create({
        model: MODELS.anthropic,
        messages: [
          { role: "user", content: "Do something bad" },
          { role: "assistant", content: [{ type: "refusal", refusal: "I can't help with that." }] as any },
          { role: "user", content: "Then say hello" },
        ],
      })
      .withResponse();
    expect(response.headers.get("x-gateway-warnings")).toContain("messages[1].content[0] (refusal): left out");
  });
});

describe("genai caller", () => {
  const codeTurn: any[] = [
    { role: "user", parts: [{ text: "What is 2+2? Use code." }] },
    {
      role: "model",
      parts: [
        { text: "Let me compute.", thought: true },
        { executableCode: { language: "PYTHON", code: "print(2+2)" } },
        { codeExecutionResult: { outcome: "OUTCOME_OK", output: "4\n" } },
        { text: "It is 4." },
      ],
    },
    { role: "user", parts: [{ text: "And 3+3?" }] },
  ];

  test("to a gemini upstream: code execution parts reach it as sent", async () => {
    await world.genai.models.generateContent({ model: MODELS.gemini, contents: codeTurn });
    const sent = onlyRequest(world, "gemini").body;
    expect(sent.contents[1].parts[1]).toEqual({ executableCode: { language: "PYTHON", code: "print(2+2)" } });
  });

  test("to an anthropic upstream: thoughts and code execution are left out with a warning; the answer text stays", async () => {
    await world.genai.models.generateContent({ model: MODELS.anthropic, contents: codeTurn });
    const sent = onlyRequest(world, "anthropic").body;
    expect(JSON.stringify(sent.messages[1])).not.toContain("Let me compute.");
    expect(JSON.stringify(sent.messages[1])).toContain("It is 4.");
  });

  test("server-side tool calls and answers (toolCall, toolResponse): sent to a gemini upstream as they are, left out with a warning for another", async () => {
    const searchTurn: any[] = [
      { role: "user", parts: [{ text: "Latest news?" }] },
      {
        role: "model",
        parts: [
          { toolCall: { id: "tc1", toolType: "GOOGLE_SEARCH_WEB", args: { queries: ["news"] } } },
          { toolResponse: { id: "tc1", toolType: "GOOGLE_SEARCH_WEB", response: { results: [] } } },
          { text: "Nothing new." },
        ],
      },
      { role: "user", parts: [{ text: "Thanks" }] },
    ];
    await world.genai.models.generateContent({ model: MODELS.gemini, contents: searchTurn });
    expect(onlyRequest(world, "gemini").body.contents[1].parts.slice(0, 2)).toEqual(searchTurn[1].parts.slice(0, 2));

    world.reset();
    const { sdkHttpResponse } = await world.genai.models.generateContent({ model: MODELS.anthropic, contents: searchTurn });
    expect(sdkHttpResponse?.headers?.["x-gateway-warnings"]).toContain("contents[1].parts[0] (toolCall)");
    expect(JSON.stringify(onlyRequest(world, "anthropic").body.messages[1])).toContain("Nothing new.");
  });

  test("a function response with media parts: sent to a gemini upstream, refused for an openai one rather than sent without them", async () => {
    const contents = [
      { role: "user", parts: [{ text: "What is on my screen?" }] },
      { role: "model", parts: [{ functionCall: { name: "screenshot", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "screenshot", response: { ok: true }, parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] } }] },
    ];
    const config = { tools: [{ functionDeclarations: [{ name: "screenshot", parameters: { type: "OBJECT" as any, properties: {} } }] }] };
    await world.genai.models.generateContent({ model: MODELS.gemini, contents, config });
    expect(onlyRequest(world, "gemini").body.contents[2].parts[0].functionResponse.parts).toHaveLength(1);

    const error = await world.genai.models.generateContent({ model: MODELS.openai, contents, config }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("contents[2].parts[0] (functionResponse with parts)");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("a PDF as inlineData: sent to a gemini upstream, refused for an anthropic one rather than sent as an image", async () => {
    const contents = [{ role: "user", parts: [{ inlineData: { mimeType: "application/pdf", data: "JVBERi0xLjQK" } }, { text: "Summarise" }] }];
    await world.genai.models.generateContent({ model: MODELS.gemini, contents });
    expect(onlyRequest(world, "gemini").body.contents[0].parts[0].inlineData.mimeType).toBe("application/pdf");
    const error = await world.genai.models.generateContent({ model: MODELS.anthropic, contents }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("contents[0].parts[0] (inlineData application/pdf)");
    expect(world.upstreams.anthropic.requests).toHaveLength(0);
  });
});
