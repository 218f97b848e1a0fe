import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { MODELS, postJson, rejectionOf, REMOTE_KINDS, startWorld, type RemoteKind, type World } from "./_support.ts";

/**
 * Codex CLI groups some of its function tools in a `namespace` tool (its sub-agent tools), and
 * the model calls them by name within that namespace: the function_call item says `name` and
 * `namespace`, and Codex sends it back so. The body is the one Codex 0.169 sent, trimmed.
 */

const CODEX_BODY = jsonFixture("codex-responses-namespace-tools.json") as Record<string, any>;
const CLOSE_AGENT = CODEX_BODY.tools[1].tools[0];

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const post = (body: unknown) => postJson(world, "/v1/responses", body);

/** The functions an upstream of `kind` was offered, in its own format, as name and description. */
function offeredFunctions(body: any, kind: RemoteKind): { name: string; description: string }[] {
  if (kind === "openai") return body.tools.map((t: any) => t.function);
  return kind === "anthropic" ? body.tools : body.tools.flatMap((t: any) => t.functionDeclarations);
}

/** The name an upstream of `kind` was offered the namespace's close_agent under. */
function upstreamNameOfCloseAgent(request: { body: any }, kind: RemoteKind = "openai"): string {
  const tool = offeredFunctions(request.body, kind).find((fn) => fn.description.includes(CLOSE_AGENT.description));
  expect(tool).toBeDefined();
  return tool!.name;
}

/** The names of the functions an upstream of `kind` was told it must call from: the tool_choice, in its format. */
function forcedNames(body: any, kind: RemoteKind): string[] {
  if (kind === "openai") return [body.tool_choice.function.name];
  return kind === "anthropic" ? [body.tool_choice.name] : body.toolConfig.functionCallingConfig.allowedFunctionNames;
}

/** An OpenAI chat answer calling `name`, whole or as a stream. */
function callAnswer(name: string, stream: boolean): Response {
  const call = { id: "call_ns1", type: "function", function: { name, arguments: '{"target":"agent-7"}' } };
  if (!stream) {
    return Response.json({
      id: "chatcmpl-ns", object: "chat.completion", created: 1, model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  }
  const chunk = (choice: unknown, usage: unknown = null) => `data: ${JSON.stringify({ id: "chatcmpl-ns", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: choice ? [choice] : [], usage })}\n\n`;
  const body =
    chunk({ index: 0, delta: { role: "assistant", tool_calls: [{ index: 0, ...call }] }, finish_reason: null }) +
    chunk({ index: 0, delta: {}, finish_reason: "tool_calls" }) +
    chunk(null, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) +
    "data: [DONE]\n\n";
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** The function_call items of a Response, read from a whole body or from a stream's response.completed event. */
async function functionCallsOf(response: Response, stream: boolean): Promise<any[]> {
  if (!stream) return (await response.json()).output.filter((item: any) => item.type === "function_call");
  const events = (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
  const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
  const completed = events.find((e) => e.type === "response.completed").response.output;
  expect(done).toEqual(completed);
  return completed.filter((item: any) => item.type === "function_call");
}

describe("Codex's namespace tool", () => {
  for (const kind of REMOTE_KINDS) {
    test(`is served on the ${kind} channel, its functions offered beside the plain ones, with what the namespace says of them`, async () => {
      const response = await post({ ...CODEX_BODY, model: MODELS[kind], stream: false });
      expect(response.status).toBe(200);
      const [request] = world.upstreams[kind].requests;
      const descriptions = JSON.stringify(request!.body.tools);
      const said = (text: string) => JSON.stringify(text).slice(1, -1);
      for (const fn of [CODEX_BODY.tools[0], ...CODEX_BODY.tools[1].tools]) expect(descriptions).toContain(said(fn.description));
      expect(descriptions).toContain(said(CODEX_BODY.tools[1].description));
    });
  }

  for (const stream of [false, true]) {
    test(`a call of one of its functions comes back named within its namespace, and goes up again under the name offered (${stream ? "streamed" : "whole"})`, async () => {
      world.upstreams.openai.setBehavior({ script: (request) => callAnswer(upstreamNameOfCloseAgent(request), stream) });
      const first = await post({ ...CODEX_BODY, model: MODELS.openai, stream });
      expect(first.status).toBe(200);
      const calls = await functionCallsOf(first, stream);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ name: "close_agent", namespace: "multi_agent_v1", call_id: "call_ns1", arguments: '{"target":"agent-7"}' });
      const offered = upstreamNameOfCloseAgent(world.upstreams.openai.requests[0]!);

      // Codex's next turn: the call as it came, its output after it.
      world.upstreams.openai.setBehavior({});
      const output = { type: "function_call_output", call_id: "call_ns1", output: "closed" };
      const second = await post({ ...CODEX_BODY, model: MODELS.openai, stream: false, input: [...CODEX_BODY.input, calls[0], output] });
      expect(second.status).toBe(200);
      const sent = world.upstreams.openai.requests[1]!.body.messages;
      const assistant = sent.find((m: any) => m.role === "assistant");
      expect(assistant.tool_calls[0].function.name).toBe(offered);
      expect(sent.at(-1)).toEqual({ role: "tool", tool_call_id: "call_ns1", content: "closed" });
    });
  }

  for (const kind of REMOTE_KINDS) {
    test(`a tool_choice naming one of its functions as '<namespace>.<function>' forces that function on the ${kind} channel`, async () => {
      // As OpenAI's Agents SDKs write a namespace's function in tool_choice (a tool's own name holds no dot).
      const tool_choice = { type: "function" as const, name: "multi_agent_v1.close_agent" };
      const response = await world.openai.responses.create({ model: MODELS[kind], input: CODEX_BODY.input, tools: CODEX_BODY.tools, tool_choice });
      expect(response.tool_choice).toEqual(tool_choice);
      const [request] = world.upstreams[kind].requests;
      expect(forcedNames(request!.body, kind)).toEqual([upstreamNameOfCloseAgent(request!, kind)]);
    });
  }

  test("a tool_choice naming no function of a namespace goes on as sent, as one naming no tool does", async () => {
    // The last shares its upstream name with namespace a__b's function c, which it does not name.
    const aB = { type: "namespace", name: "a__b", description: "Tools.", tools: [{ type: "function", name: "c", description: "C.", parameters: null, strict: false }] };
    for (const [tools, name] of [[CODEX_BODY.tools, "multi_agent_v1.no_such_agent"], [CODEX_BODY.tools, "close_agent"], [[aB], "a.b__c"]]) {
      world.reset();
      await world.openai.responses.create({ model: MODELS.openai, input: CODEX_BODY.input, tools, tool_choice: { type: "function", name } });
      expect(forcedNames(world.upstreams.openai.requests[0]!.body, "openai")).toEqual([name]);
    }
  });

  test("the Response repeats the tools as the caller sent them, the namespace holding its functions, whole, streamed and kept", async () => {
    const asked = { model: MODELS.openai, input: CODEX_BODY.input, tools: CODEX_BODY.tools };
    const whole = await world.openai.responses.create(asked);
    expect(whole.tools).toEqual(CODEX_BODY.tools);
    expect((await world.openai.responses.retrieve(whole.id)).tools).toEqual(CODEX_BODY.tools);

    const echoed: Record<string, unknown> = {};
    for await (const event of await world.openai.responses.create({ ...asked, stream: true })) {
      if (event.type === "response.created" || event.type === "response.completed") echoed[event.type] = event.response.tools;
    }
    expect(echoed).toEqual({ "response.created": CODEX_BODY.tools, "response.completed": CODEX_BODY.tools });
  });

  describe("two functions that would go upstream under one name", () => {
    const fn = (name: string) => ({ type: "function" as const, name, description: `${name}.`, parameters: null, strict: false });
    const namespace = (name: string, ...fns: string[]) => ({ type: "namespace" as const, name, description: `${name}.`, tools: fns.map(fn) });
    const CLASHES: [string, OpenAI.Responses.Tool[], string][] = [
      ["a function named as a namespace's would be", [fn("a__b"), namespace("a", "b")], "function 'a__b' and function 'b' of namespace 'a' would both go upstream as 'a__b'"],
      ["the same, the namespace first", [namespace("a", "b"), fn("a__b")], "function 'a__b' and function 'b' of namespace 'a' would both go upstream as 'a__b'"],
      ["the functions of two namespaces", [namespace("a", "b__c"), namespace("a__b", "c")], "function 'b__c' of namespace 'a' and function 'c' of namespace 'a__b' would both go upstream as 'a__b__c'"],
      ["one function twice in a namespace", [namespace("a", "b", "b")], "function 'b' of namespace 'a' and function 'b' of namespace 'a' would both go upstream as 'a__b'"],
    ];

    test.each(CLASHES)("are a 400 naming both, sent nowhere: %s", async (_, tools, clash) => {
      for (const ask of [() => world.openai.responses.create({ model: MODELS.openai, input: "Hi", tools }), () => world.openai.responses.inputTokens.count({ model: MODELS.openai, input: "Hi", tools })]) {
        const error = await rejectionOf(ask());
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error.error).toEqual({ message: `Invalid 'tools': ${clash}`, type: "invalid_request_error", code: 400, param: "tools" });
      }
      expect(world.upstreams.openai.requests).toHaveLength(0);
    });

    test("two namespaces may hold functions of one name, as plain functions may share one (the upstream judges those)", async () => {
      await world.openai.responses.create({ model: MODELS.openai, input: "Hi", tools: [namespace("a", "b"), namespace("c", "b"), fn("d"), fn("d")] });
      expect(world.upstreams.openai.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(["a__b", "c__b", "d", "d"]);
    });
  });

  test("a custom tool inside a namespace is a 400 naming it, as one outside is", async () => {
    const custom = { type: "custom", name: "apply_patch", description: "Edit files." };
    const response = await post({ ...CODEX_BODY, model: MODELS.openai, tools: [{ ...CODEX_BODY.tools[1], tools: [custom] }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.param).toBe("tools[0].tools[0]");
    expect(body.error.message).toContain("custom");
  });
});
