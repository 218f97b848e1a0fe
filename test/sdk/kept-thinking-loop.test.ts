import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { MODELS, openAiWeatherTool, startWorld, WEATHER_REPORT, warningsOf, type World } from "./_support.ts";

/**
 * A thinking Anthropic model's tool loop of three turns (two sequential calls, then the
 * answer), driven by callers of other formats. A loop is one assistant turn: Anthropic thinks
 * at its start and, without interleaved thinking, not again after a tool result, so the
 * second call comes without thinking; with interleaved thinking (adaptive thinking on newer
 * models) each answer begins with its own. Each later turn must carry the loop's first answer
 * back with its thinking first, which the loopback upstream checks as the real one does, and
 * every answer's thinking where it was made.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const FIRST = jsonFixture("anthropic-thinking-tools-message.json") as { content: any[] };
const FIRST_THINKING = FIRST.content.filter((block) => block.type !== "tool_use");
const FIRST_CALL = FIRST.content.find((block) => block.type === "tool_use");
const SECOND_CALL = { type: "tool_use", id: "toolu_02LyN8wQ3rT6vX9zB2cE5fHj", name: "get_weather", input: { location: "Lyon, France" } };
/** The second answer's own thinking, as a model thinking between tool calls (interleaved) gives it. */
const SECOND_THINKING = [{ type: "thinking", thinking: "Paris is done; now Lyon.", signature: "EqQBCkYIBxgCKkBsecond" }];
const LAST_TEXT = "Paris: 18 °C and light rain; Lyon: 18 °C and light rain.";

/**
 * The upstream answers each turn of the loop by how many answers it was sent back: the first
 * call with thinking, the second with its own thinking or none, then the text. What earlier
 * tests kept goes first: their answers called tools under the same ids.
 */
function loopUpstream(interleaved: boolean): void {
  world.gw.database.sql.run("DELETE FROM kept_thinking", []);
  const answer = (content: unknown[], stopReason: string) => ({ ...FIRST, content, stop_reason: stopReason });
  const answers = [
    FIRST,
    answer(interleaved ? [...SECOND_THINKING, SECOND_CALL] : [SECOND_CALL], "tool_use"),
    answer([{ type: "text", text: LAST_TEXT }], "end_turn"),
  ];
  world.upstreams.anthropic.setBehavior({ messageFor: (body) => answers[body.messages.filter((message: { role: string }) => message.role === "assistant").length] });
}

/** What the upstream was sent on the loop's third turn, its last request. */
const thirdTurnSent = () => world.upstreams.anthropic.requests.at(-1)!.body;

/** The two answers as the upstream should get them back on the third turn, each with its own thinking first. */
function expectBothAnswersBack(sent: any, interleaved: boolean): void {
  expect(sent.thinking).toEqual({ type: "adaptive" });
  const assistants = sent.messages.filter((message: { role: string }) => message.role === "assistant");
  expect(assistants.map((message: { content: unknown }) => message.content)).toEqual([
    [...FIRST_THINKING, FIRST_CALL],
    interleaved ? [...SECOND_THINKING, SECOND_CALL] : [SECOND_CALL],
  ]);
}

describe.each([false, true])("interleaved thinking: %p", (interleaved) => {
  test("an OpenAI chat caller's third turn carries the first answer's thinking first, and the second's where it was made", async () => {
    loopUpstream(interleaved);
    const asked = { model: MODELS.anthropic, tools: [openAiWeatherTool], reasoning_effort: "low" as const };
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "What's the weather in Paris, then in Lyon?" }];
    for (const expectedCall of [FIRST_CALL, SECOND_CALL]) {
      const answer = (await world.openai.chat.completions.create({ ...asked, messages })).choices[0]!.message;
      const call = answer.tool_calls![0]!;
      expect(call.id).toBe(expectedCall.id);
      messages.push(answer, { role: "tool", tool_call_id: call.id, content: JSON.stringify(WEATHER_REPORT) });
    }

    const { data, response } = await world.openai.chat.completions.create({ ...asked, messages }).withResponse();
    expect(data.choices[0]!.message.content).toBe(LAST_TEXT);
    expect(warningsOf(response)).not.toContain("reasoning");
    expectBothAnswersBack(thirdTurnSent(), interleaved);
  });

  test("a Responses caller sending both calls and outputs in order (as Codex CLI does) gets the same", async () => {
    loopUpstream(interleaved);
    const tool: OpenAI.Responses.FunctionTool = { type: "function", name: "get_weather", parameters: openAiWeatherTool.function.parameters ?? {}, strict: false };
    const asked = { model: MODELS.anthropic, tools: [tool], reasoning: { effort: "low" as const }, store: false };
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "What's the weather in Paris, then in Lyon?" }];
    for (const expectedCall of [FIRST_CALL, SECOND_CALL]) {
      const response = await world.openai.responses.create({ ...asked, input });
      const call = response.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call.call_id).toBe(expectedCall.id);
      input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]), { type: "function_call_output", call_id: call.call_id, output: JSON.stringify(WEATHER_REPORT) });
    }
    expect(input.map((item) => item.type ?? "message")).toEqual(["message", "function_call", "function_call_output", "function_call", "function_call_output"]);

    const { data, response } = await world.openai.responses.create({ ...asked, input }).withResponse();
    expect(data.output_text).toBe(LAST_TEXT);
    expect(warningsOf(response)).not.toContain("reasoning");
    expectBothAnswersBack(thirdTurnSent(), interleaved);
  });
});
