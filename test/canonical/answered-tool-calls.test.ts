import { expect, test } from "bun:test";
import type { ChatMessage } from "../../src/canonical/chat.ts";
import { answeredToolLoop } from "../../src/canonical/answered-tool-calls.ts";

/**
 * Which answers of a conversation make the tool loop its last turns continue: those Anthropic,
 * thinking, wants back with their thinking.
 */

const user = (text: string): ChatMessage => ({ role: "user", parts: [{ type: "text", text }] });
const system = (text: string): ChatMessage => ({ role: "system", parts: [{ type: "text", text }] });
const calling = (id: string): ChatMessage => ({ role: "assistant", parts: [{ type: "text", text: "Let me look." }, { type: "tool_call", id, name: "get_weather", arguments: "{}" }] });
const saying = (text: string): ChatMessage => ({ role: "assistant", parts: [{ type: "text", text }] });
const result = (id: string): ChatMessage => ({ role: "tool", parts: [{ type: "tool_result", toolCallId: id, content: "sunny" }] });

test("every calling answer since the user's last words, oldest first", () => {
  const first = calling("call_1");
  const second = calling("call_2");
  expect(answeredToolLoop([user("Paris, then Lyon?"), first, result("call_1"), second, result("call_2")])).toEqual([first, second]);
});

test("a user's words beside tool results still answer: the loop goes on through them", () => {
  const first = calling("call_1");
  const second = calling("call_2");
  expect(answeredToolLoop([user("Paris?"), first, result("call_1"), user("And Lyon."), second, result("call_2"), user("In French.")])).toEqual([first, second]);
});

test("a user turn without tool results begins a new loop; system messages are passed by", () => {
  const later = calling("call_2");
  const conversation = [user("Paris?"), calling("call_1"), result("call_1"), saying("Sunny."), user("Lyon?"), system("Be brief."), later, system("Be brief."), result("call_2")];
  expect(answeredToolLoop(conversation)).toEqual([later]);
});

test("a conversation that does not end answering calls continues no loop", () => {
  expect(answeredToolLoop([user("Paris?"), calling("call_1"), result("call_1"), saying("Sunny."), user("Lyon?")])).toBeUndefined();
  expect(answeredToolLoop([user("Paris?"), calling("call_1")])).toBeUndefined();
  expect(answeredToolLoop([user("Paris?")])).toBeUndefined();
});
