import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { REASONING_EFFORT_REFUSAL, startOpenAiUpstream } from "../helpers/openai-upstream.ts";
import { BUDGET_REFUSAL_MESSAGE, startAnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { startGeminiUpstream } from "../helpers/gemini-upstream.ts";
import { CLAUDE_CODE_BETAS, ownModels, postJson, startWorld, warningsOf, type World } from "./_support.ts";

/**
 * A reasoning setting the translation gave a model that does not take it. Claude Code asks
 * for adaptive thinking at effort high on every model; behind the gateway, an OpenAI model that
 * does not reason (gpt-4o) was sent `reasoning_effort: "high"` and answered 400, so the caller
 * got a 400 for a parameter it never sent in that form. The request now goes again at once on
 * the same channel without the setting, with a warning, and the model is remembered, so the
 * next request leaves it out from the start. A budget to a Claude model that thinks
 * adaptively only (Opus 4.7 and later) goes again as adaptive thinking instead. A same-format
 * caller's own setting still gets the upstream's 400, as it would directly.
 */

let world: World;
const models = ownModels("refusing");
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world.close();
  await models.close();
});

const WARNING = "reasoning: not passed on: the upstream model refused it";

/** A model served by one channel of `type` whose upstream is `upstream`: each its own refusals and breaker state. */
const modelOn = (type: string, upstream: { url: string; close(): Promise<void> }) => models.on(world, type, upstream);

/** Claude Code's request (adaptive thinking at effort high), whole or streamed, for `model`. */
function claudeCodeRequest(model: string, stream: boolean): Promise<Response> {
  return world.gw.fetch("/v1/messages?beta=true", {
    method: "POST",
    headers: { "x-api-key": world.key, "anthropic-version": "2023-06-01", "anthropic-beta": CLAUDE_CODE_BETAS, "content-type": "application/json" },
    body: JSON.stringify({ ...jsonFixture("claude-code-request.json"), model, stream }),
  });
}

const usageRows = async (): Promise<number> => (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.total;
const channelStatus = async (id: string): Promise<string> => (await world.gw.admin("GET", `/v1/admin/channels/${id}`)).body.status;

/** What the first try's translation warned of is said once, not again for the second. */
function expectEachOnce(warnings: string): void {
  const each = warnings.split("; ");
  expect(each.length).toBeGreaterThan(1);
  expect(new Set(each).size).toBe(each.length);
}

/** Reads a response whole and says what the caller saw of it. */
async function seen(response: Response) {
  const text = await response.text();
  return { status: response.status, text: response.ok ? "" : text, warnings: warningsOf(response), attempts: response.headers.get("x-gateway-attempts") };
}

describe("Claude Code on an openai channel whose model does not reason", () => {
  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "whole"}: sent again without reasoning_effort, then without it from the start`, async () => {
      const upstream = await startOpenAiUpstream({ refusesReasoning: true });
      const { model, channelId } = await modelOn("openai", upstream);
      const rowsBefore = await usageRows();

      const first = await seen(await claudeCodeRequest(model, stream));
      expect(first).toMatchObject({ status: 200, text: "", attempts: "2" });
      expect(first.warnings).toContain(WARNING);
      expect(upstream.requests.map((request) => request.body.reasoning_effort)).toEqual(["high", undefined]);
      expectEachOnce(first.warnings);
      expect(await usageRows()).toBe(rowsBefore + 1);
      const [row] = (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.usage;
      expect(row).toMatchObject({ status: 200, channel_id: channelId });
      expect(await channelStatus(channelId)).toBe("active");

      upstream.reset();
      const next = await seen(await claudeCodeRequest(model, stream));
      expect(next).toMatchObject({ status: 200, text: "", attempts: "1" });
      expect(next.warnings).toContain(WARNING);
      expect(upstream.requests.map((request) => request.body.reasoning_effort)).toEqual([undefined]);
    });
  }
});

describe("an openai caller's own reasoning_effort to an openai model that refuses it", () => {
  test("gets the upstream's 400, every time, as it would directly", async () => {
    const upstream = await startOpenAiUpstream({ refusesReasoning: true });
    const { model } = await modelOn("openai", upstream);
    for (const _ of [1, 2]) {
      const response = await postJson(world, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], reasoning_effort: "high" });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatchObject({ message: REASONING_EFFORT_REFUSAL.error.message, param: "reasoning_effort" });
    }
    expect(upstream.requests.map((request) => request.body.reasoning_effort)).toEqual(["high", "high"]);
  });
});

describe("a gemini caller's thinkingConfig to an anthropic model without extended thinking", () => {
  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "whole"}: sent again without thinking, then without it from the start`, async () => {
      const upstream = await startAnthropicUpstream({ refusesReasoning: true });
      const { model } = await modelOn("anthropic", upstream);
      const send = () =>
        postJson(world, `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
          contents: [{ role: "user", parts: [{ text: "hi" }] }],
          generationConfig: { maxOutputTokens: 4000, frequencyPenalty: 0.5, thinkingConfig: { thinkingLevel: "HIGH" } },
        });
      const first = await seen(await send());
      expect(first).toMatchObject({ status: 200, text: "", attempts: "2" });
      expect(first.warnings).toContain(WARNING);
      expect(first.warnings).toContain("frequency_penalty: not supported by the upstream; ignored");
      expectEachOnce(first.warnings);
      expect(upstream.requests.map((request) => request.body.thinking)).toEqual([{ type: "adaptive" }, undefined]);
      expect(upstream.requests[1]!.body.output_config).toBeUndefined();

      upstream.reset();
      const next = await seen(await send());
      expect(next).toMatchObject({ status: 200, attempts: "1" });
      expect(next.warnings).toContain(WARNING);
      expect(upstream.requests.map((request) => request.body.thinking)).toEqual([undefined]);
    });
  }
});

describe("a gemini caller's thinkingBudget to an anthropic model that thinks adaptively only", () => {
  const ADAPTIVE_WARNING = "reasoning: thinking budget sent as adaptive thinking at effort medium: the upstream model thinks adaptively only";
  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "whole"}: sent again as adaptive thinking at the budget's effort, then so from the start`, async () => {
      const upstream = await startAnthropicUpstream({ thinksAdaptivelyOnly: true });
      const { model, channelId } = await modelOn("anthropic", upstream);
      const rowsBefore = await usageRows();
      const send = () =>
        postJson(world, `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
          contents: [{ role: "user", parts: [{ text: "hi" }] }],
          generationConfig: { maxOutputTokens: 16000, frequencyPenalty: 0.5, thinkingConfig: { thinkingBudget: 8000 } },
        });
      const sentThinking = () => upstream.requests.map((request) => [request.body.thinking, request.body.output_config]);

      const first = await seen(await send());
      expect(first).toMatchObject({ status: 200, text: "", attempts: "2" });
      expect(first.warnings).toContain(ADAPTIVE_WARNING);
      expect(first.warnings).not.toContain(WARNING);
      expectEachOnce(first.warnings);
      expect(sentThinking()).toEqual([
        [{ type: "enabled", budget_tokens: 8000 }, undefined],
        [{ type: "adaptive" }, { effort: "medium" }],
      ]);
      expect(await usageRows()).toBe(rowsBefore + 1);
      const [row] = (await world.gw.admin("GET", "/v1/admin/usage?limit=1")).body.usage;
      expect(row).toMatchObject({ status: 200, channel_id: channelId });
      expect(await channelStatus(channelId)).toBe("active");

      upstream.reset();
      const next = await seen(await send());
      expect(next).toMatchObject({ status: 200, text: "", attempts: "1" });
      expect(next.warnings).toContain(ADAPTIVE_WARNING);
      expect(sentThinking()).toEqual([[{ type: "adaptive" }, { effort: "medium" }]]);
    });
  }

  test("an anthropic caller's own budget gets the upstream's 400, every time, as it would directly", async () => {
    const upstream = await startAnthropicUpstream({ thinksAdaptivelyOnly: true });
    const { model } = await modelOn("anthropic", upstream);
    for (const _ of [1, 2]) {
      const response = await postJson(world, "/v1/messages", { model, max_tokens: 16000, thinking: { type: "enabled", budget_tokens: 8000 }, messages: [{ role: "user", content: "hi" }] });
      expect(response.status).toBe(400);
      expect(response.headers.get("x-gateway-attempts")).toBe("1");
      expect((await response.json()).error).toMatchObject({ type: "invalid_request_error", message: BUDGET_REFUSAL_MESSAGE });
    }
    expect(upstream.requests.map((request) => request.body.thinking)).toEqual([
      { type: "enabled", budget_tokens: 8000 },
      { type: "enabled", budget_tokens: 8000 },
    ]);
  });
});

describe("a gemini 2.5 model, which refuses a thinkingLevel and takes a budget", () => {
  test("an openai caller's effort is sent again without it; an anthropic caller's budget still goes", async () => {
    const upstream = await startGeminiUpstream({ refusesThinkingLevel: true });
    const { model } = await modelOn("gemini", upstream);
    const thinkingConfigs = () => upstream.requests.map((request) => request.body.generationConfig?.thinkingConfig);

    const first = await seen(await postJson(world, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], reasoning_effort: "low", stream: true }));
    expect(first).toMatchObject({ status: 200, text: "", attempts: "2" });
    expect(first.warnings).toContain(WARNING);
    // An openai caller always sees the model's thinking, so its thought summaries were asked for too.
    expect(thinkingConfigs()).toEqual([{ thinkingLevel: "LOW", includeThoughts: true }, undefined]);

    upstream.reset();
    const budget = await seen(
      await postJson(world, "/v1/messages", { model, max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2000 }, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(budget).toMatchObject({ status: 200, text: "", attempts: "1" });
    expect(budget.warnings).not.toContain(WARNING);
    expect(thinkingConfigs()).toEqual([{ thinkingBudget: 2000, includeThoughts: true }]);
  });
});

test("an upstream that refuses the request sent again too is called twice, not more, and its 400 reaches the caller", async () => {
  const upstream = await startOpenAiUpstream({ script: () => Response.json(REASONING_EFFORT_REFUSAL, { status: 400 }) });
  const { model } = await modelOn("openai", upstream);
  const response = await claudeCodeRequest(model, false);
  expect(response.status).toBe(400);
  expect(response.headers.get("x-gateway-attempts")).toBe("2");
  expect((await response.json()).error.message).toBe(REASONING_EFFORT_REFUSAL.error.message);
  expect(upstream.requests.map((request) => request.body.reasoning_effort)).toEqual(["high", undefined]);
});
