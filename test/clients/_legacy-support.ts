import { expect } from "bun:test";
import { GoogleGenerativeAI, type FunctionDeclarationSchema, type GenerativeModel, type ModelParams, type Tool } from "@google/generative-ai";
import { ChatOpenAI, OpenAIEmbeddings, type ChatOpenAIFields, type OpenAIEmbeddingsParams } from "@langchain/openai";
import { ChatAnthropic, type AnthropicInput } from "@langchain/anthropic";
import { tool } from "@langchain/core/tools";
import { HumanMessage, ToolMessage, type AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { z } from "zod";
import { createChannel, createUserKey, expectedOf, MODELS, rejectionOf, startWorld, UPSTREAM_KEYS, WEATHER, WEATHER_REPORT, type KindName, type RemoteKind, type World } from "../sdk/_support.ts";
import { summarizeStreamFixture } from "../helpers/openai-upstream.ts";
import { postJson, priceModel, startOpenAiMediaUpstream, upstreamEmbedding, type MediaUpstream } from "../helpers/openai-media-upstream.ts";

/**
 * The clients of test/clients/langchain-*.test.ts and generative-ai-*.test.ts, built the way
 * their users build them against the provider, with only the base URL and key changed, over
 * the world of test/sdk/_support.ts (one gateway, a loopback upstream of each kind, the mock).
 */

/**
 * Google's legacy SDK (@google/generative-ai) for `model`: the gateway is RequestOptions.baseUrl
 * (the SDK adds the apiVersion, v1beta unless told otherwise).
 */
export function legacyModel(world: World, model: string, params: Omit<ModelParams, "model"> = {}, key = world.key): GenerativeModel {
  return new GoogleGenerativeAI(key).getGenerativeModel({ model, ...params }, { baseUrl: world.gw.url });
}

/** The weather tool as a legacy SDK user declares it: SchemaType's lower-case JSON Schema types, which WEATHER already uses. */
export const legacyWeatherTool: Tool = {
  functionDeclarations: [{ name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters as unknown as FunctionDeclarationSchema }],
};

/**
 * An openai stream of one call of the weather tool. The default tool stream makes two parallel
 * calls, which Google's legacy SDK aggregates into two copies of the last (its own fault: Gemini
 * sends parallel calls in one chunk too) and which a test of one call's round trip does not want.
 */
export const ONE_CALL_STREAM = "openai-chat-tool-stream-repeated-header.sse";

/** The arguments of the upstream's (first) call of the weather tool; the mock's fill the required fields. */
export function expectedWeatherArgs(kind: KindName, mode: "plain" | "stream"): Record<string, unknown> {
  if (kind === "mock") return { location: "mock" };
  if (kind === "openai" && mode === "stream") return JSON.parse(summarizeStreamFixture(ONE_CALL_STREAM).toolCalls[0]!.arguments);
  return expectedOf(kind, mode, true).tools[0]!.args as Record<string, unknown>;
}

/** LangChain's ChatOpenAI for `kind`'s model, through the gateway's OpenAI surface. */
export function chatOpenAi(world: World, kind: KindName, fields: ChatOpenAIFields = {}): ChatOpenAI {
  return new ChatOpenAI({ model: MODELS[kind], apiKey: world.key, configuration: { baseURL: `${world.gw.url}/v1` }, maxRetries: 0, ...fields });
}

/** LangChain's ChatAnthropic for `kind`'s model, through the gateway's messages surface (anthropicApiUrl is the host root, as Anthropic's). */
export function chatAnthropic(world: World, kind: KindName, fields: Partial<AnthropicInput> = {}): ChatAnthropic {
  return new ChatAnthropic({ model: MODELS[kind], apiKey: world.key, anthropicApiUrl: world.gw.url, maxRetries: 0, ...fields });
}

/** The weather tool as a LangChain user writes it: a zod schema, the tool's result the report callers send back. */
export const weatherTool = tool(async () => JSON.stringify(WEATHER_REPORT), {
  name: WEATHER.name,
  description: WEATHER.description,
  schema: z.object({ location: z.string().describe("City and country"), unit: z.enum(["celsius", "fahrenheit"]).optional() }),
});

/** A structured answer LangChain's withStructuredOutput parses, its zod schema and a value of it. */
export const Person = z.object({ name: z.string(), age: z.number() });
export const ADA = { name: "Ada", age: 36 };

/** A LangChain chat model's streamed answer to `input`, its chunks concatenated as LangChain's users do. */
export async function streamedWhole(model: BaseChatModel, input: string | BaseMessage[]): Promise<AIMessageChunk> {
  let whole: AIMessageChunk | undefined;
  let chunks = 0;
  for await (const chunk of await model.stream(input)) {
    whole = whole ? whole.concat(chunk) : chunk;
    chunks++;
  }
  if (chunks < 2) throw new Error(`expected a stream of several chunks, got ${chunks}`);
  return whole!;
}

/**
 * The weather asked for with weatherTool bound, then the tool's result sent back as a
 * ToolMessage for each call, as an agent loop does: both answers. `streamed` reads the first
 * answer as a stream.
 */
export async function weatherToolRoundTrip(model: BaseChatModel, streamed = false): Promise<{ first: AIMessage | AIMessageChunk; second: AIMessage | AIMessageChunk }> {
  const bound = model.bindTools!([weatherTool]) as BaseChatModel;
  const question = new HumanMessage("What is the weather in Paris?");
  const first = streamed ? await streamedWhole(bound, [question]) : await bound.invoke([question]);
  const results = (first.tool_calls ?? []).map((call) => new ToolMessage({ tool_call_id: call.id!, content: JSON.stringify(WEATHER_REPORT) }));
  const second = await bound.invoke([question, first, ...results]);
  return { first, second };
}

/**
 * Checks the gateway's refusals reach a LangChain chat model (`build` with the model or key
 * changed) as errors with their status, 402 for an account without funds and 404 for a model it
 * does not serve, and that a stream an upstream breaks off raises instead of ending as if whole.
 */
export async function expectLangChainRefusals(world: World, build: (fields: { model?: string; apiKey?: string }) => BaseChatModel): Promise<void> {
  const { key } = await createUserKey(world.gw, { plan: "enterprise", balance: 0 });
  expect(await rejectionOf(build({ model: MODELS.mock, apiKey: key }).invoke("Hi"))).toMatchObject({ status: 402 });
  expect(await rejectionOf(build({ model: "no-such-model" }).invoke("Hi"))).toMatchObject({ status: 404 });
  world.upstreams.openai.setBehavior({ cutAfterEvents: 3 });
  const broken = await rejectionOf(streamedWhole(build({ model: MODELS.openai }), "Hi"));
  expect(broken.message).toContain("upstream stream ended before the response was complete");
}

/** LangChain's OpenAIEmbeddings for `model`, through the gateway's /v1/embeddings. */
export function openAiEmbeddings(world: World, model: string, fields: Partial<OpenAIEmbeddingsParams> = {}): OpenAIEmbeddings {
  return new OpenAIEmbeddings({ model, apiKey: world.key, configuration: { baseURL: `${world.gw.url}/v1` }, maxRetries: 0, ...fields });
}

/** The embedding model of each kind that serves embeddings (anthropic has none). */
export const EMBEDDING_MODELS = { openai: "oa-embed", gemini: "gm-embed", mock: "demo-embed" } as const;
export type EmbeddingKind = keyof typeof EMBEDDING_MODELS;
export const EMBEDDING_KINDS = Object.keys(EMBEDDING_MODELS) as EmbeddingKind[];

/** The world of _support.ts with the channels of EMBEDDING_MODELS, and the OpenAI media upstream its openai one is on. */
export interface EmbeddingWorld extends World {
  media: MediaUpstream;
}

/**
 * A world (startWorld) with priced channels for EMBEDDING_MODELS: an openai channel on an
 * OpenAI media upstream and a gemini channel on the world's gemini upstream, which embeds
 * through batchEmbedContents. Closing it closes the media upstream too.
 */
export async function startEmbeddingWorld(): Promise<EmbeddingWorld> {
  const world = await startWorld();
  const media = startOpenAiMediaUpstream();
  await createChannel(world.gw, { name: "embeddings openai", type: "openai", base_url: media.url, api_key: "sk-up", models: [EMBEDDING_MODELS.openai] });
  await createChannel(world.gw, { name: "embeddings gemini", type: "gemini", base_url: world.upstreams.gemini.url, api_key: UPSTREAM_KEYS.gemini, models: [EMBEDDING_MODELS.gemini] });
  await priceModel(world.gw, EMBEDDING_MODELS.openai, "embeddings");
  await priceModel(world.gw, EMBEDDING_MODELS.gemini, "embeddings");
  return {
    ...world,
    media,
    async close() {
      await world.close();
      await media.close();
    },
  };
}

/** The vectors `kind`'s channel gives `texts`: the loopback upstreams' own, the mock's as /v1/embeddings answers in floats. */
export async function expectedVectors(world: World, kind: EmbeddingKind, texts: string[]): Promise<number[][]> {
  if (kind !== "mock") return texts.map((text) => upstreamEmbedding(text));
  const response = await postJson(world.gw, world.key, "/v1/embeddings", { model: EMBEDDING_MODELS.mock, input: texts, encoding_format: "float" });
  return (await response.json()).data.map((item: { embedding: number[] }) => item.embedding);
}

/** The body of the last request the upstream of `kind` received (what the gateway sent for the caller's latest turn). */
export function lastUpstreamBody(world: World, kind: RemoteKind): any {
  return world.upstreams[kind].requests.at(-1)!.body;
}

/** The schema of the answer's format in the request an upstream of `kind` received, from its own field (Gemini's either). */
export function answerSchemaUpstream(kind: RemoteKind, body: any): any {
  if (kind === "openai") return body.response_format.json_schema.schema;
  if (kind === "anthropic") return body.output_config.format.schema;
  return body.generationConfig.responseJsonSchema ?? body.generationConfig.responseSchema;
}

/** Checks the request an upstream of `kind` received holds a schema of `properties` as the answer's format. */
export function expectAnswerSchemaUpstream(kind: RemoteKind, body: any, properties: string[]): void {
  expect(Object.keys(answerSchemaUpstream(kind, body).properties)).toEqual(properties);
}

/** Checks the request an upstream of `kind` received forces a call of the tool `name`, in its own field. */
export function expectForcedToolUpstream(kind: RemoteKind, body: any, name: string): void {
  if (kind === "openai") expect(body.tool_choice).toEqual({ type: "function", function: { name } });
  else if (kind === "anthropic") expect(body.tool_choice).toEqual({ type: "tool", name });
  else expect(body.toolConfig.functionCallingConfig).toEqual({ mode: "ANY", allowedFunctionNames: [name] });
}
