import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { generateText, stepCountIs, streamText } from "ai";
import { expectedOf, expectResultUpstream, flattenText, KINDS, MODELS, startWorld, WEATHER, WEATHER_REPORT, type KindName, type World } from "../sdk/_support.ts";
import { AI_CALLERS, modelFor, requestsOf, TIME_REPORT, TOOLS, type AiCaller } from "./_ai-sdk-support.ts";

/**
 * The AI SDK's tool loop through each of its callers against each upstream kind: tools
 * declared with zod, the model's call parsed and run by the SDK, and its result sent back in
 * a second step (stopWhen: stepCountIs(2)). The loopback upstreams call a tool whenever
 * tools are offered, so the second step calls again; the demo model answers the result.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** What a step of the SDK's result says of its tool calls and results. */
function callsOf(step: { toolCalls: { toolName: string; input: unknown }[]; toolResults: { toolName: string; output: unknown }[] }) {
  return {
    calls: step.toolCalls.map((call) => ({ name: call.toolName, args: call.input })),
    results: step.toolResults.map((result) => ({ name: result.toolName, output: result.output })),
  };
}

const REPORTS: Record<string, unknown> = { [WEATHER.name]: WEATHER_REPORT, get_time: TIME_REPORT };

describe.each(AI_CALLERS.map((c) => [c]))("AI SDK caller %s", (caller: AiCaller) => {
  describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
    test.each([["generateText"], ["streamText"]])("%s: the call run by the SDK, its result sent back in the second step", async (how) => {
      const ask = { model: modelFor(world, caller, MODELS[kind]), prompt: "What is the weather in Paris?", tools: TOOLS, stopWhen: stepCountIs(2), maxRetries: 0 };
      const errors: unknown[] = [];
      const result = how === "generateText" ? await generateText(ask) : streamText({ ...ask, onError: ({ error }) => void errors.push(error) });
      const steps = await result.steps;
      expect(errors).toEqual([]);
      expect(steps).toHaveLength(2);
      const [first, second] = steps;
      expect(first!.finishReason).toBe("tool-calls");
      const expectedCalls = kind === "mock" ? [{ name: WEATHER.name, args: { location: "mock" } }] : expectedOf(kind, how === "generateText" ? "plain" : "stream", true).tools;
      expect(callsOf(first!)).toEqual({ calls: expectedCalls, results: expectedCalls.map((call) => ({ name: call.name, output: REPORTS[call.name] })) });
      if (kind === "mock") {
        // The demo model answers the tool's result in words.
        expect(second!.finishReason).toBe("stop");
        expect(second!.text).toContain("light rain");
        return;
      }
      const [asked, answered] = requestsOf(world, kind, 2);
      expect(flattenText(asked)).toContain(WEATHER.description);
      if (expectedCalls.length === 1) expectResultUpstream(kind, answered, WEATHER.name);
      else for (const report of ["light rain", TIME_REPORT.time]) expect(flattenText(answered)).toContain(report);
      expect(second!.finishReason).toBe("tool-calls");
    });
  });
});
