/**
 * A bad field inside a union (a content block, a part) is named itself, not the union around
 * it: `tool_use_id` missing reads as such, not as "must be a string or an array of content
 * blocks" (the fuzz review's table of unhelpful messages).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { expectError } from "../auth/support.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

const messages = (content: unknown) => ["/v1/messages", { model: "demo-chat", max_tokens: 16, messages: [{ role: "user", content }] }] as const;
const chat = (content: unknown) => ["/v1/chat/completions", { model: "demo-chat", messages: [{ role: "user", content }] }] as const;
const gemini = (body: Record<string, unknown>) => ["/v1beta/models/demo-chat:generateContent", { contents: [{ parts: [{ text: "hi" }] }], ...body }] as const;

const CASES: Array<[string, readonly [string, unknown], string]> = [
  ["messages: tool_result without tool_use_id", messages([{ type: "tool_result" }]), "'messages[0].content[0].tool_use_id' is required"],
  ["messages: tool_use with input \"x\"", messages([{ type: "tool_use", id: "t", name: "f", input: "x" }]), "Invalid 'messages[0].content[0].input'"],
  ["messages: tool_use without id", messages([{ type: "tool_use", name: "f", input: {} }]), "'messages[0].content[0].id' is required"],
  ["messages: image source type zzz", messages([{ type: "image", source: { type: "zzz" } }]), "Invalid 'messages[0].content[0].source.type'"],
  ["chat: text part without text", chat([{ type: "text" }]), "'messages[0].content[0].text' is required"],
  ["chat: image_url as a string", chat([{ type: "image_url", image_url: "http://example.test/a.png" }]), "Invalid 'messages[0].content[0].image_url'"],
  ["Gemini: inlineData without mimeType", gemini({ contents: [{ parts: [{ inlineData: { data: "AA==" } }] }] }), "'contents[0].parts[0].inlineData.mimeType' is required"],
  ["Gemini: functionResponse.response a string", gemini({ contents: [{ parts: [{ functionResponse: { name: "f", response: "x" } }] }] }), "Invalid 'contents[0].parts[0].functionResponse.response'"],
  ["Gemini: systemInstruction text a number", gemini({ systemInstruction: { parts: [{ text: 5 }] } }), "Invalid 'systemInstruction.parts[0].text'"],
];

for (const [label, [path, body], expected] of CASES) {
  test(`${label} → 400 naming the field`, async () => {
    const response = await gw.fetch(path, { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify(body) });
    expect(await expectError(response, 400, "invalid_request_error")).toStartWith(expected);
  });
}
