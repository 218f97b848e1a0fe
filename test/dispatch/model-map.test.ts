import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";

/** The model a channel is asked for: its model_map's entry for the public ID, else the ID itself. */

let gw: TestGateway;
let up: OpenAiUpstream;
beforeAll(async () => {
  gw = await startTestGateway();
  up = await startOpenAiUpstream();
  const created = await gw.admin("POST", "/v1/admin/channels", {
    name: "mapped",
    type: "openai",
    base_url: up.url,
    api_key: "upstream-secret",
    models: ["constructor", "toString", "hasOwnProperty"],
    model_map: { "public-alias": "upstream-name" },
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await up.close();
});

async function modelSentFor(model: string): Promise<unknown> {
  up.reset();
  const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
  expect(response.status).toBe(200);
  expect(up.requests).toHaveLength(1);
  return up.requests[0]!.body.model;
}

test("an alias goes upstream as the name model_map gives it", async () => {
  expect(await modelSentFor("public-alias")).toBe("upstream-name");
});

test("model IDs that are names of Object's own methods go upstream as they are, not as the map's inherited function", async () => {
  for (const model of ["constructor", "toString", "hasOwnProperty"]) expect(await modelSentFor(model)).toBe(model);
});
