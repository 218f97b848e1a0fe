import { GoogleGenerativeAI, type FunctionDeclarationSchema, type GenerativeModel, type ModelParams, type Tool } from "@google/generative-ai";
import { ChatOpenAI, OpenAIEmbeddings, type ChatOpenAIFields } from "@langchain/openai";
import { ChatAnthropic, type AnthropicInput } from "@langchain/anthropic";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { MODELS, WEATHER, WEATHER_REPORT, type KindName, type World } from "../sdk/_support.ts";

/**
 * The clients of test/clients/langchain-*.test.ts and generative-ai-*.test.ts, built the way
 * their users build them against the provider, with only the base URL and key changed, over
 * the world of test/sdk/_support.ts (one gateway, a loopback upstream of each kind, the mock).
 */

/**
 * Google's legacy SDK (@google/generative-ai) for the model of `kind`'s channel: the gateway
 * is RequestOptions.baseUrl (the SDK adds the apiVersion, v1beta unless told otherwise).
 */
export function legacyModel(world: World, kind: KindName, params: Omit<ModelParams, "model"> = {}, key = world.key): GenerativeModel {
  return new GoogleGenerativeAI(key).getGenerativeModel({ model: MODELS[kind], ...params }, { baseUrl: world.gw.url });
}

/** The weather tool as a legacy SDK user declares it: SchemaType's lower-case JSON Schema types, which WEATHER already uses. */
export const legacyWeatherTool: Tool = {
  functionDeclarations: [{ name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters as unknown as FunctionDeclarationSchema }],
};

/** LangChain's ChatOpenAI for `kind`'s model, through the gateway's OpenAI surface. */
export function chatOpenAi(world: World, kind: KindName, fields: ChatOpenAIFields = {}): ChatOpenAI {
  return new ChatOpenAI({ model: MODELS[kind], apiKey: world.key, configuration: { baseURL: `${world.gw.url}/v1` }, maxRetries: 0, ...fields });
}

/** LangChain's ChatAnthropic for `kind`'s model, through the gateway's messages surface (anthropicApiUrl is the host root, as Anthropic's). */
export function chatAnthropic(world: World, kind: KindName, fields: Partial<AnthropicInput> = {}): ChatAnthropic {
  return new ChatAnthropic({ model: MODELS[kind], apiKey: world.key, anthropicApiUrl: world.gw.url, maxRetries: 0, ...fields });
}

/** LangChain's OpenAIEmbeddings for `model`, through the gateway's /v1/embeddings. */
export function openAiEmbeddings(world: World, model: string, key = world.key): OpenAIEmbeddings {
  return new OpenAIEmbeddings({ model, apiKey: key, configuration: { baseURL: `${world.gw.url}/v1` }, maxRetries: 0 });
}

/** The weather tool as a LangChain user writes it: a zod schema, the tool's result the report callers send back. */
export const weatherTool = tool(async () => JSON.stringify(WEATHER_REPORT), {
  name: WEATHER.name,
  description: WEATHER.description,
  schema: z.object({ location: z.string().describe("City and country"), unit: z.enum(["celsius", "fahrenheit"]).optional() }),
});
