import { expect } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, Type, type GenerateContentResponse } from "@google/genai";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { bearer, startTestGateway, type TestGateway, type TestGatewayOptions } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, summarizeStreamFixture, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import {
  ANTHROPIC_PLAIN_FIXTURE,
  ANTHROPIC_STREAM_FIXTURE,
  ANTHROPIC_TOOL_STREAM_FIXTURE,
  ANTHROPIC_TOOLS_FIXTURE,
  startAnthropicUpstream,
  summarizeAnthropicMessage,
  summarizeAnthropicStream,
  type AnthropicUpstream,
} from "../helpers/anthropic-upstream.ts";
import {
  GEMINI_PLAIN_FIXTURE,
  GEMINI_STREAM_FIXTURE,
  GEMINI_TOOL_STREAM_FIXTURE,
  GEMINI_TOOLS_FIXTURE,
  startGeminiUpstream,
  summarizeGeminiResponse,
  summarizeGeminiStream,
  type GeminiUpstream,
} from "../helpers/gemini-upstream.ts";

/**
 * Shared set-up of the drop-in SDK tests: one gateway, one loopback upstream of each
 * provider kind (each with its own channel and model), a paying user on an unlimited plan
 * with their own key, and the three official SDK clients pointed at the gateway with
 * nothing changed but the base URL and key.
 */

export const CALLERS = ["openai", "anthropic", "genai"] as const;
export type CallerName = (typeof CALLERS)[number];
export const KINDS = ["openai", "anthropic", "gemini", "mock"] as const;
export type KindName = (typeof KINDS)[number];
export type RemoteKind = Exclude<KindName, "mock">;
export const REMOTE_KINDS: readonly RemoteKind[] = ["openai", "anthropic", "gemini"];

/** Keys the loopback upstreams expect; the channels are created with them. */
export const UPSTREAM_KEYS = { openai: "openai-upstream-key", anthropic: "anthropic-upstream-key", gemini: "gemini-upstream-key" } as const;

/** The beta flags Claude Code 2.1 sends with every request. */
export const CLAUDE_CODE_BETAS =
  "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24";

/** Public model of each kind's channel, and what the channel maps it to upstream. */
export const MODELS: Record<KindName, string> = { openai: "sdk-gpt", anthropic: "sdk-claude", gemini: "sdk-gemini", mock: "demo-chat" };
export const UPSTREAM_MODELS: Record<RemoteKind, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-20241022",
  gemini: "gemini-2.0-flash",
};

export interface World {
  gw: TestGateway;
  /** An API key of a user on the enterprise plan with a balance (not the rate-limited demo key). */
  key: string;
  userId: string;
  upstreams: { openai: OpenAiUpstream; anthropic: AnthropicUpstream; gemini: GeminiUpstream };
  openai: OpenAI;
  anthropic: Anthropic;
  genai: GoogleGenAI;
  /** Clears recorded requests and resets every upstream's behaviour. */
  reset(): void;
  close(): Promise<void>;
}

let emailCounter = 0;

/** A user (plan, balance) and an API key of theirs; `token` fields go to POST /v1/admin/tokens. */
export async function createUserKey(gw: TestGateway, user: Record<string, unknown>, token: Record<string, unknown> = {}): Promise<{ userId: string; key: string }> {
  const created = await adminCreateUser(gw, { email: `sdk-${++emailCounter}-${crypto.randomUUID().slice(0, 8)}@example.test`, ...user });
  const issued = await adminCreateToken(gw, { user_id: created.id, name: "sdk test key", ...token });
  expect(typeof issued.key).toBe("string");
  return { userId: created.id, key: issued.key };
}

export async function createChannel(gw: TestGateway, fields: Record<string, unknown>): Promise<string> {
  const created = await gw.admin("POST", "/v1/admin/channels", fields);
  expect(created.status).toBe(201);
  return created.body.id;
}

/** A loopback upstream as a test starts it. */
interface ClosableUpstream {
  url: string;
  close(): Promise<void>;
}

/**
 * Models of their own on a world, each served by one channel to an upstream of its own, so
 * that each has its own breaker state (and whatever else the gateway keeps per channel).
 */
export function ownModels(prefix: string) {
  const upstreams: ClosableUpstream[] = [];
  let count = 0;
  return {
    /** A new model served by one channel of `type` to `upstream`, closed by `close`. */
    async on(world: World, type: string, upstream: ClosableUpstream): Promise<{ model: string; channelId: string }> {
      upstreams.push(upstream);
      const model = `${prefix}-${type}-${++count}`;
      const channelId = await createChannel(world.gw, { name: model, type, base_url: upstream.url, api_key: "k", models: [model] });
      return { model, channelId };
    },
    close: () => Promise.all(upstreams.map((upstream) => upstream.close())),
  };
}

export function openAiClient(gw: TestGateway, key: string): OpenAI {
  return new OpenAI({ baseURL: gw.url + "/v1", apiKey: key, maxRetries: 0, timeout: 10_000 });
}
export function anthropicClient(gw: TestGateway, key: string): Anthropic {
  return new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0, timeout: 10_000 });
}
export function genaiClient(gw: TestGateway, key: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, timeout: 10_000 } });
}

export async function startWorld(options: TestGatewayOptions = {}): Promise<World> {
  const [openaiUp, anthropicUp, geminiUp] = await Promise.all([
    startOpenAiUpstream(),
    startAnthropicUpstream({ apiKey: UPSTREAM_KEYS.anthropic }),
    startGeminiUpstream({ apiKey: UPSTREAM_KEYS.gemini }),
  ]);
  const gw = await startTestGateway(options);
  // Test models have no price record; serve them free whatever the default becomes.
  const settings = await gw.admin("PATCH", "/v1/admin/settings", { allow_unpriced_models: true });
  expect(settings.status).toBe(200);
  const urls = { openai: openaiUp.url, anthropic: anthropicUp.url, gemini: geminiUp.url };
  for (const kind of REMOTE_KINDS) {
    await createChannel(gw, {
      name: `sdk ${kind}`,
      type: kind,
      base_url: urls[kind],
      api_key: UPSTREAM_KEYS[kind],
      models: [MODELS[kind]],
      model_map: { [MODELS[kind]]: UPSTREAM_MODELS[kind] },
    });
  }
  const { userId, key } = await createUserKey(gw, { plan: "enterprise", balance: 1000 });
  const upstreams = { openai: openaiUp, anthropic: anthropicUp, gemini: geminiUp };
  return {
    gw,
    key,
    userId,
    upstreams,
    openai: openAiClient(gw, key),
    anthropic: anthropicClient(gw, key),
    genai: genaiClient(gw, key),
    reset() {
      for (const up of Object.values(upstreams)) {
        up.setBehavior({});
        up.reset();
      }
    },
    async close() {
      await gw.close();
      await Promise.all(Object.values(upstreams).map((up) => up.close()));
    },
  };
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the SDK call to fail, but it succeeded");
}

/** The x-gateway-warnings header of a response, "" without one. */
export function warningsOf(response: Response): string {
  return response.headers.get("x-gateway-warnings") ?? "";
}

/** POSTs `body` as JSON to the world's gateway with its key, as a client without an SDK would. */
export function postJson(world: World, path: string, body: unknown): Promise<Response> {
  return world.gw.fetch(path, { method: "POST", headers: { ...bearer(world.key), "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** The one request an upstream of `kind` received since the last reset. */
export function onlyRequest(world: World, kind: RemoteKind): any {
  const requests = world.upstreams[kind].requests;
  expect(requests).toHaveLength(1);
  return requests[0]!;
}

// ---------------------------------------------------------------------------------------------
// What each upstream's fixtures say (computed from the fixture files, not from gateway code)

export interface Expected {
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** Every tool call the fixture makes, in order (a fixture may call tools in parallel). */
  tools: { name: string; args: unknown }[];
}

export function expectedOf(kind: RemoteKind, mode: "plain" | "stream", tools = false): Expected {
  if (kind === "openai") {
    if (mode === "plain") {
      const body = jsonFixture(tools ? "openai-chat-completion-tools.json" : "openai-chat-completion.json");
      return {
        text: body.choices[0].message.content ?? "",
        inputTokens: body.usage.prompt_tokens,
        outputTokens: body.usage.completion_tokens,
        tools: (body.choices[0].message.tool_calls ?? []).map((c: any) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) })),
      };
    }
    const s = summarizeStreamFixture(tools ? "openai-chat-tool-stream.sse" : "openai-chat-stream.sse");
    return {
      text: s.text,
      inputTokens: s.usage!.prompt_tokens,
      outputTokens: s.usage!.completion_tokens,
      tools: s.toolCalls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) })),
    };
  }
  if (kind === "anthropic") {
    const s =
      mode === "plain"
        ? summarizeAnthropicMessage(tools ? ANTHROPIC_TOOLS_FIXTURE : ANTHROPIC_PLAIN_FIXTURE)
        : summarizeAnthropicStream(tools ? ANTHROPIC_TOOL_STREAM_FIXTURE : ANTHROPIC_STREAM_FIXTURE);
    return { text: s.text, inputTokens: s.usage.input_tokens, outputTokens: s.usage.output_tokens, tools: s.toolUses.map((t) => ({ name: t.name, args: t.input })) };
  }
  const s = mode === "plain" ? summarizeGeminiResponse(tools ? GEMINI_TOOLS_FIXTURE : GEMINI_PLAIN_FIXTURE) : summarizeGeminiStream(tools ? GEMINI_TOOL_STREAM_FIXTURE : GEMINI_STREAM_FIXTURE);
  return { text: s.text, inputTokens: s.usage.promptTokenCount, outputTokens: s.usage.candidatesTokenCount, tools: s.functionCalls };
}

// ---------------------------------------------------------------------------------------------
// An upstream's whole answer, set for a test: given text, or one call of a named tool

/** Each upstream's plain answer, with `text` as the answer's text (a JSON answer). */
export const anthropicAnswering = (text: string) => ({ ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), content: [{ type: "text", text }] });
export function openAiAnswering(text: string) {
  const completion = jsonFixture("openai-chat-completion.json");
  completion.choices[0].message.content = text;
  return completion;
}
export function geminiAnswering(text: string) {
  const response = jsonFixture(GEMINI_PLAIN_FIXTURE);
  response.candidates[0].content.parts = [{ text }];
  return response;
}

/** The upstream of `kind` answers the following requests (not streamed) with `text`. */
export function answerWithText(world: World, kind: RemoteKind, text: string): void {
  if (kind === "openai") world.upstreams.openai.setBehavior({ completion: openAiAnswering(text) });
  else if (kind === "anthropic") world.upstreams.anthropic.setBehavior({ message: anthropicAnswering(text) });
  else world.upstreams.gemini.setBehavior({ response: geminiAnswering(text) });
}

/** The upstream of `kind` answers the following requests (not streamed) with one call of the tool `name`, given `args`. */
export function answerWithCall(world: World, kind: RemoteKind, name: string, args: Record<string, unknown>): void {
  if (kind === "openai") {
    const completion = jsonFixture("openai-chat-completion-tools.json");
    completion.choices[0].message.tool_calls[0].function = { name, arguments: JSON.stringify(args) };
    world.upstreams.openai.setBehavior({ completion });
  } else if (kind === "anthropic") {
    const message = jsonFixture(ANTHROPIC_TOOLS_FIXTURE);
    message.content = [{ ...message.content.find((block: { type: string }) => block.type === "tool_use"), name, input: args }];
    world.upstreams.anthropic.setBehavior({ message });
  } else {
    const response = jsonFixture(GEMINI_TOOLS_FIXTURE);
    response.candidates[0].content.parts = [{ functionCall: { name, args } }];
    world.upstreams.gemini.setBehavior({ response });
  }
}

// ---------------------------------------------------------------------------------------------
// One tool, declared the way each SDK's users declare it

export const WEATHER = {
  name: "get_weather",
  description: "Current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "City and country" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
    required: ["location"],
  },
} as const;

/** What the tool returns, as a caller sends it back (expectResultUpstream looks for its words). */
export const WEATHER_REPORT = { temperature: 18, conditions: "light rain" };

export const openAiWeatherTool = {
  type: "function" as const,
  function: { name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters as unknown as Record<string, unknown> },
};
export const anthropicWeatherTool = {
  name: WEATHER.name,
  description: WEATHER.description,
  input_schema: WEATHER.parameters as unknown as Anthropic.Tool.InputSchema,
};
/** The weather tool in the Responses API's flat shape. */
export const responsesWeatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: WEATHER.name,
  description: WEATHER.description,
  parameters: WEATHER.parameters as unknown as Record<string, unknown>,
  strict: false,
};
export const genaiWeatherTool = {
  functionDeclarations: [
    {
      name: WEATHER.name,
      description: WEATHER.description,
      parameters: {
        type: Type.OBJECT,
        properties: { location: { type: Type.STRING, description: "City and country" }, unit: { type: Type.STRING, enum: ["celsius", "fahrenheit"] } },
        required: ["location"],
      },
    },
  ],
};

// ---------------------------------------------------------------------------------------------
// One call through each SDK, normalized

export interface ToolCall {
  id?: string;
  name: string;
  args: unknown;
}

export interface Outcome {
  text: string;
  /** Usage as the caller's format reports it, in neutral names (null when absent). */
  usage: { input: number; output: number; total?: number } | null;
  toolCalls: ToolCall[];
  /** The finish/stop reason in the caller's own vocabulary. */
  finish: string | null;
  /** The SDK's final object: ChatCompletion, Message, GenerateContentResponse (the last chunk for a genai stream). */
  raw: any;
  /** Stream only: every chunk / event the SDK yielded. */
  chunks?: any[];
}

export interface Ask {
  model: string;
  prompt: string;
  tools?: boolean;
}

function textOfGenai(response: GenerateContentResponse): string {
  return (response.candidates?.[0]?.content?.parts ?? []).map((p) => (p.thought ? "" : (p.text ?? ""))).join("");
}

export const call: Record<CallerName, { plain(world: World, ask: Ask): Promise<Outcome>; stream(world: World, ask: Ask): Promise<Outcome> }> = {
  openai: {
    async plain(world, ask) {
      const completion = await world.openai.chat.completions.create({
        model: ask.model,
        messages: [{ role: "user", content: ask.prompt }],
        ...(ask.tools ? { tools: [openAiWeatherTool] } : {}),
      });
      const message = completion.choices[0]!.message;
      return {
        text: message.content ?? "",
        usage: completion.usage ? { input: completion.usage.prompt_tokens, output: completion.usage.completion_tokens, total: completion.usage.total_tokens } : null,
        toolCalls: (message.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
        finish: completion.choices[0]!.finish_reason,
        raw: completion,
      };
    },
    async stream(world, ask) {
      const stream = await world.openai.chat.completions.create({
        model: ask.model,
        messages: [{ role: "user", content: ask.prompt }],
        stream: true,
        stream_options: { include_usage: true },
        ...(ask.tools ? { tools: [openAiWeatherTool] } : {}),
      });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      let text = "";
      let finish: string | null = null;
      const calls: { id?: string; name: string; args: string }[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        for (const choice of chunk.choices) {
          if (choice.delta.content) text += choice.delta.content;
          for (const delta of choice.delta.tool_calls ?? []) {
            const slot = (calls[delta.index] ??= { name: "", args: "" });
            if (delta.id) slot.id = delta.id;
            if (delta.function?.name) slot.name += delta.function.name;
            if (delta.function?.arguments) slot.args += delta.function.arguments;
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
      const last = chunks.at(-1);
      return {
        text,
        // include_usage: the usage rides on the last chunk (whose choices are empty).
        usage: last?.usage ? { input: last.usage.prompt_tokens, output: last.usage.completion_tokens, total: last.usage.total_tokens } : null,
        toolCalls: calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args || "null") })),
        finish,
        raw: last,
        chunks,
      };
    },
  },
  anthropic: {
    async plain(world, ask) {
      const message = await world.anthropic.messages.create({
        model: ask.model,
        max_tokens: 512,
        messages: [{ role: "user", content: ask.prompt }],
        ...(ask.tools ? { tools: [anthropicWeatherTool] } : {}),
      });
      return {
        text: message.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
        usage: { input: message.usage.input_tokens, output: message.usage.output_tokens },
        toolCalls: message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, args: b.input }] : [])),
        finish: message.stop_reason,
        raw: message,
      };
    },
    async stream(world, ask) {
      const stream = world.anthropic.messages.stream({
        model: ask.model,
        max_tokens: 512,
        messages: [{ role: "user", content: ask.prompt }],
        ...(ask.tools ? { tools: [anthropicWeatherTool] } : {}),
      });
      const events: any[] = [];
      let text = "";
      stream.on("streamEvent", (event) => events.push(event));
      stream.on("text", (delta) => {
        text += delta;
      });
      const message = await stream.finalMessage();
      return {
        text,
        usage: { input: message.usage.input_tokens, output: message.usage.output_tokens },
        toolCalls: message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, args: b.input }] : [])),
        finish: message.stop_reason,
        raw: message,
        chunks: events,
      };
    },
  },
  genai: {
    async plain(world, ask) {
      const response = await world.genai.models.generateContent({
        model: ask.model,
        contents: ask.prompt,
        ...(ask.tools ? { config: { tools: [genaiWeatherTool] } } : {}),
      });
      const usage = response.usageMetadata;
      return {
        text: textOfGenai(response),
        usage: usage ? { input: usage.promptTokenCount ?? 0, output: usage.candidatesTokenCount ?? 0, total: usage.totalTokenCount } : null,
        toolCalls: (response.functionCalls ?? []).map((c) => ({ id: c.id, name: c.name!, args: c.args })),
        finish: response.candidates?.[0]?.finishReason ?? null,
        raw: response,
      };
    },
    async stream(world, ask) {
      const stream = await world.genai.models.generateContentStream({
        model: ask.model,
        contents: ask.prompt,
        ...(ask.tools ? { config: { tools: [genaiWeatherTool] } } : {}),
      });
      const chunks: GenerateContentResponse[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const last = chunks.at(-1);
      const usage = last?.usageMetadata;
      return {
        text: chunks.map(textOfGenai).join(""),
        // The last chunk carries the whole response's usage.
        usage: usage ? { input: usage.promptTokenCount ?? 0, output: usage.candidatesTokenCount ?? 0, total: usage.totalTokenCount } : null,
        toolCalls: chunks.flatMap((c) => c.functionCalls ?? []).map((c) => ({ id: c.id, name: c.name!, args: c.args })),
        finish: chunks.map((c) => c.candidates?.[0]?.finishReason).filter(Boolean).at(-1) ?? null,
        raw: last,
        chunks,
      };
    },
  },
};

/** Checks the second request an upstream received carries the call and its result in that upstream's format. */
export function expectResultUpstream(kind: RemoteKind, body: any, expectedName: string) {
  if (kind === "openai") {
    const messages = body.messages as any[];
    const tool = messages.at(-1);
    expect(tool.role).toBe("tool");
    expect(flattenText(tool.content)).toContain("light rain");
    const assistant = messages.at(-2);
    expect(assistant.role).toBe("assistant");
    expect(assistant.tool_calls).toHaveLength(1);
    expect(assistant.tool_calls[0].function.name).toBe(expectedName);
    expect(typeof assistant.tool_calls[0].function.arguments).toBe("string");
    // OpenAI rejects a tool message whose tool_call_id names no earlier call.
    expect(tool.tool_call_id).toBe(assistant.tool_calls[0].id);
  } else if (kind === "anthropic") {
    const messages = body.messages as any[];
    const user = messages.at(-1);
    expect(user.role).toBe("user");
    const result = user.content.find((b: any) => b.type === "tool_result");
    expect(result).toBeDefined();
    expect(flattenText(result.content)).toContain("light rain");
    const assistant = messages.at(-2);
    expect(assistant.role).toBe("assistant");
    const use = assistant.content.find((b: any) => b.type === "tool_use");
    expect(use.name).toBe(expectedName);
    expect(typeof use.input).toBe("object");
    // Anthropic rejects a tool_result whose tool_use_id is not the id of the preceding tool_use.
    expect(result.tool_use_id).toBe(use.id);
  } else {
    const contents = body.contents as any[];
    const user = contents.at(-1);
    expect(user.role).toBe("user");
    const response = user.parts.find((p: any) => p.functionResponse)?.functionResponse;
    expect(response).toBeDefined();
    expect(response.name).toBe(expectedName);
    expect(typeof response.response).toBe("object");
    expect(flattenText(response.response)).toContain("light rain");
    const model = contents.at(-2);
    expect(model.role).toBe("model");
    const functionCall = model.parts.find((p: any) => p.functionCall)?.functionCall;
    expect(functionCall.name).toBe(expectedName);
    expect(typeof functionCall.args).toBe("object");
  }
}

/**
 * A second turn that sent the weather tool's result back, `answer` its text: the demo model
 * echoes the result; an upstream of another kind received it, paired with its call.
 */
export function expectWeatherResultSent(world: World, kind: KindName, answer: string) {
  if (kind === "mock") {
    expect(answer).toContain("light rain");
    return;
  }
  const requests = world.upstreams[kind].requests;
  expect(requests).toHaveLength(2);
  expectResultUpstream(kind, requests[1]!.body, WEATHER.name);
}

/** Every text a JSON value contains, joined: for finding a tool result wherever a format puts it. */
export function flattenText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(flattenText).join(" ");
  if (value && typeof value === "object") return Object.values(value).map(flattenText).join(" ");
  return value === undefined || value === null ? "" : String(value);
}

/** A Response made through the openai SDK, whole (`responses.create`) or streamed (`responses.stream`, its final Response). */
export function createResponse(client: OpenAI, params: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "stream">, stream: boolean): Promise<OpenAI.Responses.Response> {
  return stream ? client.responses.stream(params).finalResponse() : client.responses.create(params);
}

/** One turn of a conversation as an upstream received it: its role and its text. */
export type ConversationTurn = { role: string; text: string };

/** A message's text, its content a string or parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** The conversation an upstream of `kind` received in its last request, its system prompt first. */
export function conversationReceived(world: World, kind: "openai" | "anthropic"): ConversationTurn[] {
  const body = world.upstreams[kind].requests.at(-1)!.body;
  const turns: ConversationTurn[] = body.messages.map((m: any) => ({ role: m.role, text: textOf(m.content) }));
  return kind === "anthropic" && body.system !== undefined ? [{ role: "system", text: textOf(body.system) }, ...turns] : turns;
}
