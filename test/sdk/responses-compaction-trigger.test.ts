import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";
import { expectedOf, MODELS, onlyRequest, postJson, REMOTE_KINDS, startWorld, warningsOf, type RemoteKind, type World } from "./_support.ts";

/**
 * Codex CLI, through OpenAI's own provider, compacts "remotely": an ordinary POST /v1/responses,
 * streamed, whose input ends with `{"type":"compaction_trigger"}`, answered by a Response whose
 * one output item is a `compaction` item, which later requests send back in input. The gateway
 * asks the model for a summary of the conversation before the trigger, as
 * POST /v1/responses/compact does, on every upstream kind. The body is the one Codex 0.169 sent
 * at its first compaction, mid-turn after two shell calls, its long texts and tools trimmed.
 */

const CODEX_BODY = jsonFixture("codex-responses-compaction-trigger.json") as Record<string, any>;

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** Codex's request for `model`, streamed or not. */
const codexBody = (model: string, stream: boolean) => ({ ...CODEX_BODY, model, stream });

/** `text` as it stands inside a JSON string, to find it in a request body of any format. */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);

/** The summary a compaction item of the gateway's carries: `gw1.` and the base64url of {"summary": ...}. */
function summaryIn(item: { encrypted_content: string }): string {
  expect(item.encrypted_content).toStartWith("gw1.");
  const base64 = item.encrypted_content.slice(4).replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(Buffer.from(base64, "base64").toString("utf8")).summary;
}

/** The events of an SSE body, parsed, in order. */
async function eventsOf(response: Response): Promise<any[]> {
  const text = await response.text();
  return text.split("\n\n").flatMap((block) => {
    const data = block.split("\n").find((line) => line.startsWith("data: "));
    return data ? [JSON.parse(data.slice(6))] : [];
  });
}

/** The conversation before the trigger went upstream, written out: its words are in the body. */
function expectConversationSent(kind: RemoteKind) {
  const sent = onlyRequest(world, kind).body;
  expect(sent.tools).toBeUndefined();
  const body = JSON.stringify(sent);
  for (const said of ["You are a coding agent", "Run the shell command 'echo step N'", "exec_command", "echo step 1", "echo step 2", "Output:\nstep 2"]) expect(body).toContain(inJson(said));
  expect(body).not.toContain("compaction_trigger");
}

describe.each(REMOTE_KINDS.map((k) => [k]))("upstream kind %s", (kind: RemoteKind) => {
  const model = MODELS[kind];

  test("whole: one compaction item carrying the model's text, and the usage of writing it", async () => {
    const response = await postJson(world, "/v1/responses", codexBody(model, false));
    expect(response.status).toBe(200);
    const body = await response.json();
    const expected = expectedOf(kind, "plain");
    expect(body).toMatchObject({ object: "response", status: "completed", model, store: false });
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({ type: "compaction", id: expect.stringMatching(/^cmp_/) });
    expect(summaryIn(body.output[0])).toBe(expected.text);
    expect(body.usage).toMatchObject({ input_tokens: expected.inputTokens, output_tokens: expected.outputTokens });
    expectConversationSent(kind);
  });

  test("streamed: created, then the compaction item added and done, then completed with usage", async () => {
    const response = await postJson(world, "/v1/responses", codexBody(model, true));
    expect(response.status).toBe(200);
    const events = await eventsOf(response);
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.output_item.done", "response.completed"]);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4]);
    const done = events[3];
    expect(done.item).toEqual(events[2].item);
    expect(done).toMatchObject({ output_index: 0, item: { type: "compaction" } });
    const expected = expectedOf(kind, "stream");
    expect(summaryIn(done.item)).toBe(expected.text);
    const completed = events[4].response;
    expect(completed).toMatchObject({ status: "completed", output: [done.item] });
    expect(completed.usage).toMatchObject({ input_tokens: expected.inputTokens, output_tokens: expected.outputTokens });
    expect(completed.usage.total_tokens).toBe(expected.inputTokens + expected.outputTokens);
    expectConversationSent(kind);
  });

  test("the next request carrying the compaction item sends the upstream its summary in its place", async () => {
    const compacted = await (await postJson(world, "/v1/responses", codexBody(model, false))).json();
    world.reset();
    // As Codex sends it: its retained user messages, then the compaction item as it came, id and all.
    const retained = CODEX_BODY.input.filter((item: any) => item.role === "user");
    const next = await postJson(world, "/v1/responses", { ...CODEX_BODY, model, stream: false, input: [...retained, compacted.output[0]] });
    expect(next.status).toBe(200);
    const body = JSON.stringify(onlyRequest(world, kind).body);
    expect(body).toContain(inJson(expectedOf(kind, "plain").text));
    expect(body).not.toContain("echo step 2");
  });

  test("billed as a chat request: a usage row under /v1/responses with the summary's tokens", async () => {
    for (const stream of [false, true]) {
      const response = await postJson(world, "/v1/responses", codexBody(model, stream));
      await response.text();
      const expected = expectedOf(kind, stream ? "stream" : "plain");
      const [row] = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
      expect(row).toMatchObject({ endpoint: "/v1/responses", model, status: 200, prompt_tokens: expected.inputTokens, completion_tokens: expected.outputTokens });
    }
  });
});

describe("where a compaction_trigger may stand", () => {
  const model = MODELS.openai;

  test("anywhere but last it is a 400 naming the item, sent nowhere", async () => {
    const input = [{ role: "user", content: "Hello" }, { type: "compaction_trigger" }, { role: "user", content: "Go on" }];
    for (const path of ["/v1/responses", "/v1/responses/compact", "/v1/responses/input_tokens"]) {
      const response = await postJson(world, path, { model, input });
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error).toMatchObject({ type: "invalid_request_error", param: "input[1]" });
      expect(error.message).toContain("compaction_trigger");
      expect(error.message).toContain("only as the last item of input");
    }
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("a second trigger before the last one is a 400 too", async () => {
    const response = await postJson(world, "/v1/responses", { model, input: [{ role: "user", content: "Hello" }, { type: "compaction_trigger" }, { type: "compaction_trigger" }] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.param).toBe("input[1]");
  });

  test("alone, with no conversation before it, it is a 400: there is nothing to compact", async () => {
    const response = await postJson(world, "/v1/responses", { model, input: [{ type: "compaction_trigger" }] });
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect(error.param).toBe("input");
    expect(error.message).toContain("needs a conversation before it");
    expect(world.upstreams.openai.requests).toHaveLength(0);
  });

  test("alone after previous_response_id, the Response it continues is compacted; the compaction is not kept", async () => {
    const first = await (await postJson(world, "/v1/responses", { model, input: "Remember the word tangerine" })).json();
    world.reset();
    const response = await postJson(world, "/v1/responses", { model, previous_response_id: first.id, input: [{ type: "compaction_trigger" }] });
    expect(response.status).toBe(200);
    const compacted = await response.json();
    expect(compacted.output).toMatchObject([{ type: "compaction" }]);
    expect(JSON.stringify(onlyRequest(world, "openai").body)).toContain("Remember the word tangerine");
    expect(warningsOf(response)).toContain("a Response that compacts is not kept");
    const retrieved = await world.gw.fetch(`/v1/responses/${compacted.id}`, { headers: { authorization: `Bearer ${world.key}` } });
    expect(retrieved.status).toBe(404);
  });
});

describe("an upstream that fails while the summary is written", () => {
  test("no compaction item: the error event and response.failed end the stream, which Codex retries; the usage row says 502", async () => {
    world.upstreams.openai.setBehavior({ cutAfterEvents: 3, streamEnd: "abort" });
    const response = await postJson(world, "/v1/responses", codexBody(MODELS.openai, true));
    const events = await eventsOf(response);
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "error", "response.failed"]);
    expect(events[3].response).toMatchObject({ status: "failed", output: [] });
    const [row] = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
    expect(row.status).toBe(502);
  });
});
