/**
 * Request bodies nested deeper than 128 levels are a 400 before anything else happens: code
 * that walks client JSON recurses, and 40,000 levels overflowed the stack into a 500 (after
 * the hold, on an openai channel).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { expectError } from "../auth/support.ts";

let gw: TestGateway;
let upstream: OpenAiUpstream;
beforeAll(async () => {
  gw = await startTestGateway();
  upstream = await startOpenAiUpstream();
  const created = await gw.admin("POST", "/v1/admin/channels", { name: "deep", type: "openai", base_url: upstream.url, api_key: "k", models: ["deep-model"] });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

/** JSON text of an object nested `levels` deep: {"a":{"a":...1...}}. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

const post = (path: string, body: string, key = gw.demoKey) => gw.fetch(path, { method: "POST", headers: bearer(key), body });

async function expectTooDeep(response: Response) {
  expect(await expectError(response, 400, "invalid_request_error")).toBe("Request body has JSON nested deeper than 128 levels");
}

test("chat: a field 40,000 levels deep is refused before the hold and the upstream call", async () => {
  const balance = async () => (await gw.fetch("/v1/balance", { headers: bearer(gw.demoKey) }).then((r) => r.json())).balance;
  const before = await balance();
  upstream.reset();
  await expectTooDeep(await post("/v1/chat/completions", `{"model":"deep-model","messages":[{"role":"user","content":"hi"}],"zzz":${nested(40_000)}}`));
  expect(upstream.requests).toHaveLength(0);
  expect(await balance()).toBe(before);
});

test("chat: 128 levels in all are served, 129 are refused", async () => {
  // The body's own object is the first level.
  const body = (levels: number) => `{"model":"deep-model","messages":[{"role":"user","content":"hi"}],"zzz":${nested(levels - 1)}}`;
  expect((await post("/v1/chat/completions", body(128))).status).toBe(200);
  await expectTooDeep(await post("/v1/chat/completions", body(129)));
});

test("chat: brackets inside strings do not count", async () => {
  const content = JSON.stringify(`${"[{".repeat(500)} \\" ${"\\".repeat(7)}"`);
  expect((await post("/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":${content}}]}`)).status).toBe(200);
});

test("messages: a tool_use input 40,000 levels deep", async () => {
  const content = `[{"type":"tool_use","id":"t","name":"f","input":${nested(40_000)}}]`;
  await expectTooDeep(await post("/v1/messages", `{"model":"demo-chat","max_tokens":16,"messages":[{"role":"assistant","content":${content}},{"role":"user","content":"ok"}]}`));
});

test("Gemini: function parameters and a functionCall's args 40,000 levels deep", async () => {
  const path = "/v1beta/models/demo-chat:generateContent";
  await expectTooDeep(await post(path, `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":${nested(40_000)}}]}]}`));
  await expectTooDeep(await post(path, `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":${nested(40_000)}}}]},{"parts":[{"text":"x"}]}]}`));
});

test("admin: a settings patch 40,000 levels deep", async () => {
  const response = await gw.fetch("/v1/admin/settings", { method: "PATCH", headers: bearer(gw.managementKey), body: `{"features":${nested(40_000)}}` });
  await expectTooDeep(response);
});
