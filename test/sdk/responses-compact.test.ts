import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";
import { expectedOf, KINDS, MODELS, onlyRequest, postJson, rejectionOf, startWorld, type KindName, type World } from "./_support.ts";

/**
 * `responses.compact` (POST /v1/responses/compact) through the openai SDK on every upstream
 * kind: the model is asked, as for any chat request, to summarise the conversation; the
 * answer is its user messages and one compaction item, whose `encrypted_content` a later
 * request sends back and the upstream then receives as the summary. A compaction item the
 * gateway did not write is a 400 naming it.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** A conversation of a tool loop, as Codex CLI keeps one. */
const CONVERSATION: OpenAI.Responses.ResponseInputItem[] = [
  { role: "user", content: "List the files in the project" },
  { type: "function_call", call_id: "call_ls", name: "exec_command", arguments: '{"cmd":"ls"}' },
  { type: "function_call_output", call_id: "call_ls", output: "README.md\nsrc" },
  { role: "assistant", content: "There are two entries: README.md and src." },
  { role: "user", content: [{ type: "input_text", text: "Now count the lines of README.md" }] },
];

/** `text` as it stands inside a JSON string, to find it in a request body of any format. */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);

/** The compaction item that ends a compacted Response. */
function compactionOf(compacted: OpenAI.Responses.CompactedResponse) {
  const item = compacted.output.at(-1)!;
  expect(item.type).toBe("compaction");
  return item as OpenAI.Responses.ResponseCompactionItem;
}

describe.each(KINDS.map((k) => [k]))("upstream kind %s", (kind: KindName) => {
  const model = MODELS[kind];

  test("compact: the user messages, then one compaction item; the usage of the summary", async () => {
    const compacted = await world.openai.responses.compact({ model, instructions: "You are a coding agent", input: CONVERSATION });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.id).toMatch(/^resp_/);
    expect(compacted.output.slice(0, -1)).toMatchObject([
      { type: "message", role: "user", content: [{ type: "input_text", text: "List the files in the project" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Now count the lines of README.md" }] },
    ]);
    const compaction = compactionOf(compacted);
    expect(compaction.id).toMatch(/^cmp_/);
    expect(compaction.encrypted_content).toStartWith("gw1.");
    const usage = compacted.usage;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    if (kind === "mock") return;
    expect({ input: usage.input_tokens, output: usage.output_tokens }).toEqual({ input: expectedOf(kind, "plain").inputTokens, output: expectedOf(kind, "plain").outputTokens });
    // The conversation goes up written out in one turn, with no tools to call.
    const sent = onlyRequest(world, kind).body;
    expect(sent.tools).toBeUndefined();
    const body = JSON.stringify(sent);
    for (const said of ["You are a coding agent", "List the files in the project", "exec_command", inJson('{"cmd":"ls"}'), inJson("README.md\nsrc"), "There are two entries", "Now count the lines"]) {
      expect(body).toContain(said);
    }
    expect(body).not.toContain("tool_use");
    expect(body).not.toContain("functionCall");
    expect(body).not.toContain("tool_calls");
  });

  test("a later turn carrying the compaction item sends the upstream its summary in its place", async () => {
    const compacted = await world.openai.responses.compact({ model, input: CONVERSATION });
    const summary = kind === "mock" ? undefined : expectedOf(kind, "plain").text;
    world.reset();
    const next = await world.openai.responses.create({ model, input: [...(compacted.output as OpenAI.Responses.ResponseInputItem[]), { role: "user", content: "Go on" }] });
    expect(next.status).toBe("completed");
    if (kind === "mock") {
      // The demo model echoes the last turn.
      expect(next.output_text).toContain("Go on");
      return;
    }
    const body = JSON.stringify(onlyRequest(world, kind).body);
    expect(body).toContain(inJson(summary!));
    expect(body).not.toContain(compactionOf(compacted).encrypted_content);
    expect(body).toContain("Now count the lines");
  });

  test("the compaction is billed as a chat request: a usage row under /v1/responses/compact", async () => {
    const { data, response } = await world.openai.responses.compact({ model, input: CONVERSATION }).withResponse();
    const [row] = await usageRowsOf(world.gw, response.headers.get("x-request-id")!);
    expect(row).toMatchObject({ endpoint: "/v1/responses/compact", model, status: 200, prompt_tokens: data.usage.input_tokens, completion_tokens: data.usage.output_tokens });
  });
});

describe("compaction items in later requests", () => {
  test("input_tokens counts the summary in the item's place", async () => {
    const compacted = await world.openai.responses.compact({ model: MODELS.mock, input: CONVERSATION });
    const count = async (input: unknown[]) => (await (await postJson(world, "/v1/responses/input_tokens", { model: MODELS.mock, input })).json()).input_tokens;
    const without = await count([{ role: "user", content: "Go on" }]);
    expect(await count([compactionOf(compacted), { role: "user", content: "Go on" }])).toBeGreaterThan(without);
  });

  test("an anthropic channel's token count is sent the summary", async () => {
    const compacted = await world.openai.responses.compact({ model: MODELS.anthropic, input: CONVERSATION });
    world.reset();
    const counted = await postJson(world, "/v1/responses/input_tokens", { model: MODELS.anthropic, input: [compactionOf(compacted), { role: "user", content: "Go on" }] });
    expect(counted.status).toBe(200);
    expect(JSON.stringify(onlyRequest(world, "anthropic").body)).toContain(inJson(expectedOf("anthropic", "plain").text));
  });

  test("a conversation already compacted is compacted again with its summary in the transcript", async () => {
    const first = await world.openai.responses.compact({ model: MODELS.openai, input: CONVERSATION });
    world.reset();
    await world.openai.responses.compact({ model: MODELS.openai, input: [compactionOf(first), { role: "user", content: "And then?" }] });
    const body = JSON.stringify(onlyRequest(world, "openai").body);
    expect(body).toContain(inJson(expectedOf("openai", "plain").text));
    expect(body).toContain("And then?");
  });

  /** Compaction items the gateway did not write: OpenAI's own, and broken forms of the gateway's. */
  const UNREADABLE: [string, string][] = [
    ["OpenAI's own encrypted compaction", "gAAAAABpZ0cmpXk2bQ1tEncryptedByOpenAI"],
    ["the gateway's prefix on bytes that are not base64", "gw1.***"],
    ["the gateway's prefix on JSON without a summary", "gw1." + btoa('{"note":"x"}').replace(/=+$/, "")],
    ["the gateway's prefix on bytes that are not JSON", "gw1." + btoa("not json").replace(/=+$/, "")],
  ];
  const ENDPOINTS = ["/v1/responses", "/v1/responses/input_tokens", "/v1/responses/compact"];

  for (const path of ENDPOINTS) {
    test.each(UNREADABLE)(`${path}: %s is a 400 naming the item, sent nowhere`, async (_, encrypted) => {
      const input = [{ role: "user", content: "Hello" }, { type: "compaction", id: "cmp_1", encrypted_content: encrypted }, { role: "user", content: "Go on" }];
      const response = await postJson(world, path, { model: MODELS.openai, input });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { message: string; type: string; param: string } };
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBe("input[1].encrypted_content");
      expect(error.message).toContain("input[1]");
      expect(error.message).toContain("not a compaction the gateway made");
      expect(world.upstreams.openai.requests).toHaveLength(0);
    });
  }

  test("the SDK's BadRequestError for an unreadable item", async () => {
    const error = await rejectionOf(world.openai.responses.create({ model: MODELS.openai, input: [{ type: "compaction", encrypted_content: "gAAAAB-openai" }] }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("input[0].encrypted_content");
  });
});
