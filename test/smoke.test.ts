import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "./helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

test("the demo key gets a chat completion from the mock channel", async () => {
  const response = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hello" }] }),
  });
  expect(response.status).toBe(200);
  const body = await response.json();
  expect(body.object).toBe("chat.completion");
  expect(body.choices[0].message.content).toContain("Hello");
});
