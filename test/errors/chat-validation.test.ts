/**
 * Spec 4.1 ranges and types: each bad chat parameter is a 400 invalid_request_error in the
 * error shape whose message names the field.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError, postChat } from "../auth/support.ts";

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startTestGateway();
  key = (await createToken(gw)).key;
});
afterAll(() => gw.close());

const valid = { model: "demo-chat", messages: [{ role: "user", content: "Hello" }] };

/** [label, field the message must name, request body] */
const CASES: Array<[string, string, Record<string, unknown>]> = [
  ["temperature 3", "temperature", { ...valid, temperature: 3 }],
  ["temperature -1", "temperature", { ...valid, temperature: -1 }],
  ["temperature as a string", "temperature", { ...valid, temperature: "0.5" }],
  ["top_p 1.5", "top_p", { ...valid, top_p: 1.5 }],
  ["top_p -0.1", "top_p", { ...valid, top_p: -0.1 }],
  ["max_tokens 0", "max_tokens", { ...valid, max_tokens: 0 }],
  ["max_tokens 1.5", "max_tokens", { ...valid, max_tokens: 1.5 }],
  ["max_tokens \"10\"", "max_tokens", { ...valid, max_tokens: "10" }],
  ["max_tokens -5", "max_tokens", { ...valid, max_tokens: -5 }],
  ["frequency_penalty 3", "frequency_penalty", { ...valid, frequency_penalty: 3 }],
  ["frequency_penalty -2.5", "frequency_penalty", { ...valid, frequency_penalty: -2.5 }],
  ["presence_penalty -3", "presence_penalty", { ...valid, presence_penalty: -3 }],
  ["presence_penalty 2.01", "presence_penalty", { ...valid, presence_penalty: 2.01 }],
  ["stop with 5 items", "stop", { ...valid, stop: ["a", "b", "c", "d", "e"] }],
  ["stop as a number", "stop", { ...valid, stop: 5 }],
  ["stop with a non-string item", "stop", { ...valid, stop: ["a", 1] }],
  ["messages missing", "messages", { model: "demo-chat" }],
  ["messages empty", "messages", { ...valid, messages: [] }],
  ["messages not an array", "messages", { ...valid, messages: "Hello" }],
  ["role \"robot\"", "role", { ...valid, messages: [{ role: "robot", content: "Hello" }] }],
  ["role missing", "role", { ...valid, messages: [{ content: "Hello" }] }],
  ["stream \"yes\"", "stream", { ...valid, stream: "yes" }],
  ["stream 1", "stream", { ...valid, stream: 1 }],
  ["model missing", "model", { messages: valid.messages }],
  ["model as a number", "model", { ...valid, model: 42 }],
  ["model empty", "model", { ...valid, model: "" }],
];

for (const [label, field, body] of CASES) {
  test(`${label} -> 400 naming '${field}'`, async () => {
    const message = await expectError(await postChat(gw, key, body), 400, "invalid_request_error");
    expect(message).toContain(field);
  });
}

test("the boundaries themselves are accepted (temperature 0 and 2, top_p 0 and 1, penalties ±2, 4 stops, max_tokens 1)", async () => {
  for (const extra of [
    { temperature: 0 },
    { temperature: 2 },
    { top_p: 0 },
    { top_p: 1 },
    { frequency_penalty: -2, presence_penalty: 2 },
    { frequency_penalty: 2, presence_penalty: -2 },
    { stop: ["a", "b", "c", "d"] },
    { stop: "END" },
    { max_tokens: 1 },
    { stream: false },
  ]) {
    const response = await postChat(gw, key, { ...valid, ...extra });
    const text = await response.text();
    expect({ extra, status: response.status, text }).toEqual({ extra, status: 200, text: expect.any(String) });
  }
});

test("a refused request is not billed (balance unchanged after a run of 400s)", async () => {
  const { key: own, userId } = await createToken(gw);
  const before = (await gw.admin("GET", `/v1/admin/users/${userId}`)).body.balance;
  for (const [, , body] of CASES.slice(0, 5)) expect((await postChat(gw, own, body)).status).toBe(400);
  const after = (await gw.admin("GET", `/v1/admin/users/${userId}`)).body.balance;
  expect(after).toBe(before);
});
