/**
 * A map an admin configures keeps every entry or is refused: valibot's record() leaves out
 * keys named __proto__, constructor and prototype without a word, so a model alias or a plan
 * of that name was accepted (200) and then missing. A caller's free-form objects (tool
 * arguments) keep such keys.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "./_helpers.ts";

let gw: TestGateway;
let channelId: string;
beforeAll(async () => {
  gw = await startTestGateway();
  channelId = (await gw.admin("POST", "/v1/admin/channels", { name: "plain", type: "mock", models: ["plain-model"] })).body.id;
});
afterAll(() => gw.close());

// JSON.parse makes "__proto__" an own key, as a body on the wire does; an object literal would set the prototype.
const keyed = (key: string, value: unknown) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`);

for (const key of ["__proto__", "constructor", "prototype"]) {
  test(`a model_map key named ${key} is a 400 naming the field, and the channel keeps its map`, async () => {
    const refused = await gw.admin("PATCH", `/v1/admin/channels/${channelId}`, { model_map: { ...keyed(key, "up"), alias: "up" } });
    expectError(refused, 400, "invalid_request_error");
    expect(refused.body.error.message).toContain("model_map");
    expect(refused.body.error.message).toContain("__proto__, constructor, prototype");
    const created = await gw.admin("POST", "/v1/admin/channels", { name: "c", type: "mock", models: ["m"], model_map: keyed(key, "up") });
    expectError(created, 400, "invalid_request_error");
    const listed = (await gw.admin("GET", "/v1/admin/channels")).body.channels.find((channel: { id: string }) => channel.id === channelId);
    expect(listed.model_map).toEqual({});
  });

  test(`a plan named ${key} is a 400 naming plans, and the settings are unchanged`, async () => {
    const before = (await gw.admin("GET", "/v1/admin/settings")).body;
    const refused = await gw.admin("PATCH", "/v1/admin/settings", { plans: keyed(key, { requests_per_minute: 5, tokens_per_minute: 5 }) });
    expectError(refused, 400, "invalid_request_error");
    expect(refused.body.error.message).toContain("plans");
    expect((await gw.admin("GET", "/v1/admin/settings")).body).toEqual(before);
  });
}

test("a Gemini caller's function call args named constructor and prototype reach the model's history intact", async () => {
  const response = await fetch(`${gw.url}/v1beta/models/demo-chat:countTokens`, {
    method: "POST",
    headers: { "x-goog-api-key": gw.demoKey, "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "model", parts: [{ functionCall: { name: "f", args: { constructor: "a".repeat(400), prototype: "b".repeat(400) } } }] }] }),
  });
  expect(response.status).toBe(200);
  // 800 characters of arguments count about 200 tokens; without them the call counts a handful.
  expect((await response.json()).totalTokens).toBeGreaterThan(200);
});
