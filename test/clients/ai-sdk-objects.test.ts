import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { generateObject, generateText, Output, streamText } from "ai";
import { MODELS, REMOTE_KINDS, startWorld, type RemoteKind, type World } from "../sdk/_support.ts";
import { AI_CALLERS, answerWhole, FORECAST, FORECAST_VALUE, modelFor, requestsOf, type AiCaller } from "./_ai-sdk-support.ts";

/**
 * Structured output through the AI SDK: generateObject and generateText with Output.object,
 * a zod schema, through each caller against each upstream kind. The openai and google
 * providers ask for JSON against the schema (response_format, text.format,
 * responseSchema); the anthropic provider, for a model it does not know, forces a tool named
 * "json" whose input is the object. Either way the schema must reach the upstream and the
 * upstream's object come back whole; the demo model answers the smallest object it allows.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** The first JSON schema in a request body with the forecast's properties, wherever the format puts it. */
function forecastSchemaIn(value: unknown): Record<string, any> | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const node = value as Record<string, any>;
  if (node.properties && typeof node.properties === "object" && "temperature" in node.properties) return node;
  for (const child of Object.values(node)) {
    const found = forecastSchemaIn(child);
    if (found) return found;
  }
  return undefined;
}

/** How the caller's provider asks for the object, and so how an upstream answers it. */
const byTool = (caller: AiCaller) => caller === "anthropic";

describe.each(AI_CALLERS.map((c) => [c]))("AI SDK caller %s", (caller: AiCaller) => {
  test.each(REMOTE_KINDS.map((k) => [k]))("upstream kind %s: generateObject and Output.object, the schema sent, the object back", async (kind: RemoteKind) => {
    answerWhole(world, kind, byTool(caller) ? { call: { name: "json", args: FORECAST_VALUE } } : { text: JSON.stringify(FORECAST_VALUE) });
    const model = modelFor(world, caller, MODELS[kind]);
    const generated = await generateObject({ model, schema: FORECAST, prompt: "The forecast for Paris", maxRetries: 0 });
    expect(generated.object).toEqual(FORECAST_VALUE);
    expect(generated.finishReason).toBe("stop");
    const viaText = await generateText({ model, output: Output.object({ schema: FORECAST }), prompt: "The forecast for Paris", maxRetries: 0 });
    expect(viaText.output).toEqual(FORECAST_VALUE);
    for (const sent of requestsOf(world, kind, 2)) {
      expect(Object.keys(forecastSchemaIn(sent)!.properties).sort()).toEqual(["city", "rain", "temperature"]);
    }
  });

  test("the demo model: the smallest object the schema takes, whole and streamed", async () => {
    const model = modelFor(world, caller, MODELS.mock);
    const smallest = { city: "mock", temperature: 1, rain: true };
    expect((await generateObject({ model, schema: FORECAST, prompt: "The forecast for Paris", maxRetries: 0 })).object).toEqual(smallest);
    const streamed = streamText({ model, output: Output.object({ schema: FORECAST }), prompt: "The forecast for Paris", maxRetries: 0 });
    expect(await streamed.output).toEqual(smallest);
  });
});
