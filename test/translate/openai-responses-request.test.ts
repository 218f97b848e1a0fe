import { describe, expect, test } from "bun:test";
import { parseOrThrow } from "../../src/lib/validate.ts";
import { ResponsesRequestSchema } from "../../src/translate/openai-responses/request-schema.ts";
import { convertResponsesRequestToCanonical } from "../../src/translate/openai-responses/convert-request-to-canonical.ts";
import { resolveItemReferences } from "../../src/translate/openai-responses/resolve-item-references.ts";

/** The Responses request translation on its own, for what an upstream's received body shows less plainly. */

/** The canonical form of a body, which refers to no kept item. */
function canonicalOf(body: Record<string, unknown>) {
  const parsed = parseOrThrow(ResponsesRequestSchema, { model: "m", ...body });
  return convertResponsesRequestToCanonical({ ...parsed, input: resolveItemReferences(parsed.input, () => undefined) });
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
});
