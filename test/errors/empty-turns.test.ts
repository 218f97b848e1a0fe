/**
 * A turn with nothing in it is refused the way the caller's provider refuses it, whatever
 * channel serves the model: Anthropic allows an empty message only as the final assistant
 * one (a prefill), Gemini no content without parts. Before, an empty Anthropic turn passed
 * validation and went on to the upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "../auth/support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const post = (path: string, body: unknown) => gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body) });
const messages = (turns: unknown[]) => post("/v1/messages", { model: "demo-chat", max_tokens: 16, messages: turns });
const generate = (contents: unknown[]) => post("/v1beta/models/demo-chat:generateContent", { contents });

test("messages: a user turn with no blocks → 400 naming it", async () => {
  const response = await messages([{ role: "user", content: [] }]);
  expect(await expectError(response, 400, "invalid_request_error")).toContain("messages[0] has empty content");
});

test("messages: an empty string in the middle of the conversation → 400 naming it", async () => {
  const response = await messages([
    { role: "user", content: "Hi" },
    { role: "assistant", content: "" },
    { role: "user", content: "Hello?" },
  ]);
  expect(await expectError(response, 400, "invalid_request_error")).toContain("messages[1] has empty content");
});

test("messages: an empty final assistant message (a prefill) is served", async () => {
  const response = await messages([
    { role: "user", content: "Hi" },
    { role: "assistant", content: "" },
  ]);
  expect(response.status).toBe(200);
  expect(((await response.json()) as { type: string }).type).toBe("message");
});

test("generateContent: a content with no parts → 400 naming it", async () => {
  const response = await generate([{ role: "user", parts: [{ text: "Hi" }] }, { role: "model", parts: [] }]);
  expect(await expectError(response, 400, "invalid_request_error")).toContain("contents[1]");
});
