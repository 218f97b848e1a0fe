import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { bearer } from "../helpers/gateway.ts";
import { MODELS, onlyRequest, startWorld, type World } from "./_support.ts";

/**
 * Issue 3 item 2: "A parameter an upstream cannot honour is reported (a warning header or
 * log), not silently dropped." Anthropic has no frequency_penalty.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

function post(body: unknown): Promise<Response> {
  return world.gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(world.key), body: JSON.stringify(body) });
}

test("openai caller -> anthropic upstream: frequency_penalty is named in x-gateway-warnings, and not sent", async () => {
  const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 });
  expect(response.status).toBe(200);
  const json: any = await response.json();
  expect(json.object).toBe("chat.completion");
  expect(response.headers.get("x-gateway-warnings") ?? "").toContain("frequency_penalty");
  expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("frequency_penalty");
});

test("streamed: the warning header is on the stream response too", async () => {
  const response = await post({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5, stream: true });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  expect(response.headers.get("x-gateway-warnings") ?? "").toContain("frequency_penalty");
  expect(await response.text()).toContain("data: [DONE]");
});

test("the header is readable through the openai SDK (withResponse)", async () => {
  const { response } = await world.openai.chat.completions
    .create({ model: MODELS.anthropic, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 })
    .withResponse();
  expect(response.headers.get("x-gateway-warnings") ?? "").toContain("frequency_penalty");
});

test("no warning when nothing is dropped: frequency_penalty to a gemini upstream is sent as frequencyPenalty", async () => {
  const response = await post({ model: MODELS.gemini, messages: [{ role: "user", content: "Hello" }], frequency_penalty: 0.5 });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  expect(response.headers.get("x-gateway-warnings")).toBeNull();
  expect(onlyRequest(world, "gemini").body.generationConfig.frequencyPenalty).toBe(0.5);
});
