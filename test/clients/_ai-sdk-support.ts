import { expect } from "bun:test";
import { tool, type LanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { z } from "zod";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE } from "../helpers/anthropic-upstream.ts";
import { GEMINI_PLAIN_FIXTURE } from "../helpers/gemini-upstream.ts";
import { WEATHER, WEATHER_REPORT, type RemoteKind, type World } from "../sdk/_support.ts";

/**
 * What the Vercel AI SDK tests share: the SDK's providers pointed at the gateway as its users
 * point them at a provider (nothing changed but the base URL and key), the tools and schemas
 * they declare with zod, and answers a loopback upstream gives in its own format. The world
 * itself (gateway, upstreams, key) is test/sdk/_support.ts's.
 */

// The anthropic provider warns on the console of every model it does not know, which the test models are not.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** The AI SDK's ways of calling a chat model, each the caller format the gateway serves it by. */
export const AI_CALLERS = ["openai.chat", "openai.responses", "anthropic", "google"] as const;
export type AiCaller = (typeof AI_CALLERS)[number];

/** The AI SDK's providers for a key, with the base URLs their users give for a provider's own. */
export function providersFor(world: World, apiKey = world.key) {
  return {
    openai: createOpenAI({ baseURL: world.gw.url + "/v1", apiKey }),
    anthropic: createAnthropic({ baseURL: world.gw.url + "/v1", apiKey }),
    google: createGoogleGenerativeAI({ baseURL: world.gw.url + "/v1beta", apiKey }),
  };
}

/** `model` as `caller` reaches it; openai(model), the provider's default, is the Responses API. */
export function modelFor(world: World, caller: AiCaller, model: string, apiKey = world.key): LanguageModel {
  const providers = providersFor(world, apiKey);
  if (caller === "openai.chat") return providers.openai.chat(model);
  if (caller === "openai.responses") return providers.openai(model);
  return providers[caller](model);
}

/** What the time tool answers, as the weather tool answers WEATHER_REPORT. */
export const TIME_REPORT = { time: "15:04" };

/**
 * The tools of the upstreams' tool fixtures, declared with zod and run by the SDK: the
 * weather tool of test/sdk/_support.ts, and the time tool OpenAI's streamed fixture also calls.
 */
export const TOOLS = {
  [WEATHER.name]: tool({
    description: WEATHER.description,
    inputSchema: z.object({ location: z.string().describe("City and country"), unit: z.enum(["celsius", "fahrenheit"]).optional() }),
    execute: async () => WEATHER_REPORT,
  }),
  get_time: tool({ description: "Current time in a timezone", inputSchema: z.object({ timezone: z.string() }), execute: async () => TIME_REPORT }),
};

/** An object the structured-output tests ask for. */
export const FORECAST = z.object({ city: z.string(), temperature: z.number(), rain: z.boolean() });
export const FORECAST_VALUE: z.infer<typeof FORECAST> = { city: "Paris", temperature: 18, rain: true };

/** How an upstream is to answer a request whole: with text, or with one call of a tool. */
export type Answer = { text: string } | { call: { name: string; args: Record<string, unknown> } };

/**
 * Makes the upstream of `kind` answer every request whole with `answer`, in its own format
 * (its plain fixture, the content replaced), whatever the request asks.
 */
export function answerWhole(world: World, kind: RemoteKind, answer: Answer): void {
  if (kind === "openai") {
    const completion = jsonFixture("openai-chat-completion.json");
    const choice = completion.choices[0];
    if ("text" in answer) choice.message.content = answer.text;
    else {
      choice.message.content = null;
      choice.message.tool_calls = [{ id: "call_answer_1", type: "function", function: { name: answer.call.name, arguments: JSON.stringify(answer.call.args) } }];
      choice.finish_reason = "tool_calls";
    }
    world.upstreams.openai.setBehavior({ completion });
  } else if (kind === "anthropic") {
    const message = jsonFixture(ANTHROPIC_PLAIN_FIXTURE);
    if ("text" in answer) message.content = [{ type: "text", text: answer.text }];
    else {
      message.content = [{ type: "tool_use", id: "toolu_answer_1", name: answer.call.name, input: answer.call.args }];
      message.stop_reason = "tool_use";
    }
    world.upstreams.anthropic.setBehavior({ message });
  } else {
    const response = jsonFixture(GEMINI_PLAIN_FIXTURE);
    response.candidates[0].content.parts = ["text" in answer ? { text: answer.text } : { functionCall: { name: answer.call.name, args: answer.call.args } }];
    world.upstreams.gemini.setBehavior({ response });
  }
}

/** The requests the upstream of `kind` received since the last reset, `count` of them. */
export function requestsOf(world: World, kind: RemoteKind, count: number): any[] {
  const requests = world.upstreams[kind].requests;
  expect(requests).toHaveLength(count);
  return requests.map((request) => request.body);
}
