/**
 * An array where an object is expected is a 400 naming the field: valibot reads an array as
 * an object keyed by its indexes, so `stream_options: [1, 2]` or `generationConfig: []`
 * passed as an empty object, and a settings patch `{"features": []}` answered 200.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "../auth/support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const CHAT = { model: "demo-chat", messages: [{ role: "user", content: "hi" }] };
const MESSAGES = { model: "demo-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
const GEMINI = { contents: [{ parts: [{ text: "hi" }] }] };
const GEMINI_PATH = "/v1beta/models/demo-chat:generateContent";
const toolUse = (input: unknown) => ({ ...MESSAGES, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input }] }, { role: "user", content: "ok" }] });

/** [label, path, body, the field the message names] */
const CASES: Array<[string, string, unknown, string]> = [
  ["chat stream_options [1, 2]", "/v1/chat/completions", { ...CHAT, stream_options: [1, 2] }, "stream_options"],
  ["chat tool parameters []", "/v1/chat/completions", { ...CHAT, tools: [{ type: "function", function: { name: "f", parameters: [] } }] }, "tools[0].function.parameters"],
  ["messages metadata []", "/v1/messages", { ...MESSAGES, metadata: [] }, "metadata"],
  ["messages tool_use input []", "/v1/messages", toolUse([]), "messages[0].content[0].input"],
  ["messages tool input_schema []", "/v1/messages", { ...MESSAGES, tools: [{ name: "f", input_schema: [] }] }, "tools[0].input_schema"],
  ["Gemini generationConfig []", GEMINI_PATH, { ...GEMINI, generationConfig: [] }, "generationConfig"],
  ["Gemini toolConfig []", GEMINI_PATH, { ...GEMINI, toolConfig: [] }, "toolConfig"],
  ["Gemini functionCallingConfig [1]", GEMINI_PATH, { ...GEMINI, toolConfig: { functionCallingConfig: [1] } }, "toolConfig.functionCallingConfig"],
  ["Gemini a tool []", GEMINI_PATH, { ...GEMINI, tools: [[]] }, "tools[0]"],
];

for (const [label, path, body, field] of CASES) {
  test(`${label} → 400 naming '${field}'`, async () => {
    const response = await gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body) });
    expect(await expectError(response, 400, "invalid_request_error")).toBe(`Invalid '${field}': must be an object, not an array`);
  });
}

test("admin: settings features, rate_limits and plans, a channel's model_map and a price's image_prices as arrays → 400", async () => {
  const before = (await gw.admin("GET", "/v1/admin/settings")).body;
  for (const [field, body] of [["features", { features: [] }], ["rate_limits", { rate_limits: [] }], ["plans", { plans: [] }]] as const) {
    const response = await gw.admin("PATCH", "/v1/admin/settings", body);
    expect({ status: response.status, message: response.body.error?.message }).toEqual({ status: 400, message: `Invalid '${field}': must be an object, not an array` });
  }
  expect((await gw.admin("GET", "/v1/admin/settings")).body).toEqual(before);
  const channel = await gw.admin("POST", "/v1/admin/channels", { name: "n", type: "mock", models: ["x"], model_map: [] });
  expect(channel.body.error.message).toBe("Invalid 'model_map': must be an object, not an array");
  const price = await gw.admin("POST", "/v1/admin/prices", { model: "arr-image", mode: "image", image_prices: [] });
  expect(price.body.error.message).toBe("Invalid 'image_prices': must be an object, not an array");
});

test("control: the same fields as objects are served", async () => {
  const ok = async (path: string, body: unknown) => (await gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body) })).status;
  expect(await ok("/v1/chat/completions", { ...CHAT, stream_options: { include_usage: true } })).toBe(200);
  expect(await ok("/v1/messages", { ...MESSAGES, metadata: { user_id: "u" } })).toBe(200);
  expect(await ok(GEMINI_PATH, { ...GEMINI, generationConfig: {}, toolConfig: { functionCallingConfig: {} } })).toBe(200);
});
