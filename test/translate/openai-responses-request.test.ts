import { describe, expect, test } from "bun:test";
import { parseOrThrow } from "../../src/lib/validate.ts";
import { ResponsesRequestSchema, type InputItem } from "../../src/translate/openai-responses/request-schema.ts";
import { messageItem, outputText, reasoningItem } from "../../src/translate/openai-responses/convert-response.ts";
import { convertResponsesRequestToCanonical } from "../../src/translate/openai-responses/convert-request-to-canonical.ts";
import { resolveItemReferences } from "../../src/translate/openai-responses/resolve-item-references.ts";

/** The Responses request translation on its own, for what an upstream's received body shows less plainly. */

/** The canonical form of a body, which refers to no kept item, after the conversation it continues (`earlier`). */
function canonicalOf(body: Record<string, unknown>, earlier: InputItem[] = []) {
  const parsed = parseOrThrow(ResponsesRequestSchema, { model: "m", ...body });
  return convertResponsesRequestToCanonical({ ...parsed, input: resolveItemReferences(parsed.input, () => undefined) }, earlier);
}

describe("convertResponsesRequestToCanonical", () => {
  test("an answer's text and its calls are one assistant turn; each output a tool message, an array of input_text joined", () => {
    const request = canonicalOf({
      input: [
        { role: "user", content: "Weather in Paris and Rome?" },
        { type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Looking.", annotations: [] }] },
        { type: "function_call", id: "fc_1", call_id: "call_p", name: "weather", arguments: '{"city":"Paris"}', status: "completed" },
        { type: "function_call", id: "fc_2", call_id: "call_r", name: "weather", arguments: '{"city":"Rome"}', status: "completed" },
        { type: "function_call_output", call_id: "call_p", output: "18C" },
        { type: "function_call_output", call_id: "call_r", output: [{ type: "input_text", text: "2" }, { type: "input_text", text: "1C" }] },
      ],
    });
    expect(request.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Looking." },
          { type: "tool_call", id: "call_p", name: "weather", arguments: '{"city":"Paris"}' },
          { type: "tool_call", id: "call_r", name: "weather", arguments: '{"city":"Rome"}' },
        ],
      },
      { role: "tool", parts: [{ type: "tool_result", toolCallId: "call_p", content: "18C" }] },
      { role: "tool", parts: [{ type: "tool_result", toolCallId: "call_r", content: "21C" }] },
    ]);
    expect(request.native).toBeUndefined();
  });

  test("tools in the flat shape, the choice of one, no parallel calls, and the settings", () => {
    const request = canonicalOf({
      input: "Hi",
      tools: [{ type: "function", name: "weather", description: null, parameters: null, strict: true }],
      tool_choice: { type: "function", name: "weather" },
      parallel_tool_calls: false,
      max_output_tokens: 64,
      temperature: 0.3,
      top_p: 0.5,
      store: false,
    });
    expect(request.tools).toEqual([{ name: "weather", description: undefined, parameters: { type: "object", properties: {} }, strict: true }]);
    expect(request).toMatchObject({ toolChoice: { name: "weather" }, parallelToolCalls: false, params: { maxTokens: 64, temperature: 0.3, topP: 0.5 }, stream: false });
    expect(request.unhonoured).toEqual([]);
  });

  test("what reaches no upstream is noted: an image's detail, an earlier refusal, storage, fields the chat form lacks", () => {
    const request = canonicalOf({
      input: [
        { role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png", detail: "high" }] },
        { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      ],
      text: { format: { type: "text" }, verbosity: "low" },
      service_tier: "flex",
    });
    expect(request.messages[1]).toEqual({ role: "assistant", parts: [] });
    expect(request.unhonoured!.map((note) => note.slice(0, note.indexOf(":")))).toEqual([
      "text.verbosity",
      "service_tier",
      "store",
      "input[0].content[0].detail",
      "input[1].content[0] (refusal)",
    ]);
  });

  test("a continued conversation comes after the instructions and before the input; what it loses is one note, the input's keep their places", () => {
    const earlier: InputItem[] = [
      { role: "user", content: "Turn one" },
      reasoningItem("rs_1", "Thinking it over"),
      messageItem("msg_1", [outputText("Answer one"), { type: "refusal", refusal: "Not that." }], "completed"),
      { role: "user", content: "Turn two" },
      reasoningItem("rs_2", "Again"),
      messageItem("msg_2", [outputText("Answer two")], "completed"),
    ];
    const request = canonicalOf({ instructions: "Be brief", input: [{ type: "reasoning", id: "rs_3", summary: [] }, { role: "user", content: "Turn three" }], store: false }, earlier);
    expect(request.messages.map((m) => [m.role, m.parts.map((p) => (p.type === "text" ? p.text : p.type)).join("")])).toEqual([
      ["system", "Be brief"],
      ["user", "Turn one"],
      ["assistant", "Answer one"],
      ["user", "Turn two"],
      ["assistant", "Answer two"],
      ["user", "Turn three"],
    ]);
    expect(request.unhonoured!.map((note) => note.slice(0, note.indexOf(":")))).toEqual(["previous_response_id", "input[0] (reasoning)"]);
    expect(request.unhonoured![0]).toContain("3 part(s)");
  });
});
