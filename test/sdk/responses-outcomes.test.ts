import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { readFixture } from "../helpers/loopback-upstream.ts";
import { usageRowsOf } from "../helpers/openai-media-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE, ANTHROPIC_STREAM_FIXTURE } from "../helpers/anthropic-upstream.ts";
import { GEMINI_PLAIN_FIXTURE, GEMINI_STREAM_FIXTURE } from "../helpers/gemini-upstream.ts";
import { createUserKey, KINDS, MODELS, onlyRequest, openAiClient, REMOTE_KINDS, startWorld, type KindName, type RemoteKind, type World } from "./_support.ts";

/**
 * What a Response says of its answer, through the openai SDK against each upstream kind: an
 * image reaches the upstream in its own form, an answer cut by max_output_tokens is
 * `incomplete`, and a request is billed and logged exactly as the same chat completion.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** A 1x1 PNG. */
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("an input_image", () => {
  test.each(REMOTE_KINDS.map((k) => [k]))("reaches the %s upstream as that format's image", async (kind) => {
    const response = await world.openai.responses.create({
      model: MODELS[kind as RemoteKind],
      input: [{ role: "user", content: [{ type: "input_text", text: "What is this?" }, { type: "input_image", image_url: `data:image/png;base64,${PIXEL}`, detail: "auto" }] }],
    });
    expect(response.status).toBe("completed");
    const body = onlyRequest(world, kind as RemoteKind).body;
    if (kind === "openai") expect(body.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } });
    if (kind === "anthropic") expect(body.messages[0].content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } });
    if (kind === "gemini") expect(body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: "image/png", data: PIXEL } });
  });
});

/** Each remote kind's fixture, with the stop of a finished answer made the stop of one cut at its token limit. */
const CUT = {
  openai: { plain: "openai-chat-completion.json", stream: "openai-chat-stream.sse", finished: /"finish_reason":\s*"stop"/g, cut: '"finish_reason":"length"' },
  anthropic: { plain: ANTHROPIC_PLAIN_FIXTURE, stream: ANTHROPIC_STREAM_FIXTURE, finished: /"stop_reason":\s*"end_turn"/g, cut: '"stop_reason":"max_tokens"' },
  gemini: { plain: GEMINI_PLAIN_FIXTURE, stream: GEMINI_STREAM_FIXTURE, finished: /"finishReason":\s*"STOP"/g, cut: '"finishReason":"MAX_TOKENS"' },
};

/** Makes `kind`'s upstream answer as if cut at its token limit. */
function answerCutShort(kind: RemoteKind, mode: "plain" | "stream") {
  const cut = CUT[kind];
  const text = readFixture(cut[mode]).replace(cut.finished, cut.cut);
  const type = mode === "plain" ? "application/json" : "text/event-stream";
  world.upstreams[kind].setBehavior({ script: () => new Response(text, { headers: { "content-type": type } }) });
}

describe.each(KINDS.map((k) => [k]))("max_output_tokens reached, upstream kind %s", (kind: KindName) => {
  // The mock writes a word a token, and stops at the limit.
  const setUp = (mode: "plain" | "stream") => (kind === "mock" ? undefined : answerCutShort(kind, mode));

  test("create: status incomplete, the reason, the message item incomplete", async () => {
    setUp("plain");
    const response = await world.openai.responses.create({ model: MODELS[kind], input: "Tell me a long story", max_output_tokens: 3 });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.max_output_tokens).toBe(3);
    expect((response.output.at(-1) as OpenAI.Responses.ResponseOutputMessage).status).toBe("incomplete");
    expect(response.output_text.length).toBeGreaterThan(0);
    if (kind === "openai") expect(onlyRequest(world, kind).body.max_tokens).toBe(3);
    if (kind === "anthropic") expect(onlyRequest(world, kind).body.max_tokens).toBe(3);
    if (kind === "gemini") expect(onlyRequest(world, kind).body.generationConfig.maxOutputTokens).toBe(3);
  });

  test("streamed: response.incomplete last, carrying the reason", async () => {
    setUp("stream");
    const stream = await world.openai.responses.create({ model: MODELS[kind], input: "Tell me a long story", max_output_tokens: 3, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events.at(-1) as OpenAI.Responses.ResponseIncompleteEvent;
    expect(last.type).toBe("response.incomplete");
    expect(last.response.status).toBe("incomplete");
    expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(events.some((e) => e.type === "response.completed")).toBe(false);
    const done = events.filter((e) => e.type === "response.output_item.done") as OpenAI.Responses.ResponseOutputItemDoneEvent[];
    expect((done.at(-1)!.item as OpenAI.Responses.ResponseOutputMessage).status).toBe("incomplete");
  });
});

describe("usage and billing, as chat's", () => {
  test.each(["plain", "stream"] as const)("%s: one usage row under /v1/responses, costing what the same chat completion costs", async (mode) => {
    const model = "sdk-gpt-priced";
    const price = await world.gw.admin("POST", "/v1/admin/prices", { model, input_per_million: 3, output_per_million: 15 });
    expect(price.status).toBe(200);
    const channel = await world.gw.admin("PATCH", `/v1/admin/channels/${(await channelOf("sdk openai")).id}`, { models: [MODELS.openai, model], model_map: { [model]: "gpt-4o-mini" } });
    expect(channel.status).toBe(200);
    const { userId, key } = await createUserKey(world.gw, { plan: "enterprise", balance: 10 });
    const client = openAiClient(world.gw, key);

    let responseRequestId: string;
    if (mode === "plain") {
      const response = await client.responses.create({ model, input: "Hello" });
      responseRequestId = response._request_id!;
    } else {
      const { data: stream, response } = await client.responses.create({ model, input: "Hello", stream: true }).withResponse();
      for await (const _ of stream);
      responseRequestId = response.headers.get("x-request-id")!;
    }
    const chat =
      mode === "plain"
        ? (await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }] }).withResponse()).response
        : await (async () => {
            const { data: stream, response } = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], stream: true }).withResponse();
            for await (const _ of stream);
            return response;
          })();

    // A row is committed before its response ends, so each request's rows are all there.
    const rows = await usageRowsOf(world.gw, responseRequestId);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    const [chatRow] = await usageRowsOf(world.gw, chat.headers.get("x-request-id")!);
    expect(row).toMatchObject({ endpoint: "/v1/responses", model, status: 200, user_id: userId });
    expect(chatRow.endpoint).toBe("/v1/chat/completions");
    expect({ prompt: row.prompt_tokens, completion: row.completion_tokens, cost: row.cost }).toEqual({ prompt: chatRow.prompt_tokens, completion: chatRow.completion_tokens, cost: chatRow.cost });
    expect(row.cost).toBeGreaterThan(0);
    const user = (await world.gw.admin("GET", `/v1/admin/users/${userId}`)).body;
    expect(user.balance).toBeCloseTo(10 - row.cost - chatRow.cost, 9);
  });
});

/** The world's channel named `name`. */
async function channelOf(name: string): Promise<any> {
  const listed = await world.gw.admin("GET", "/v1/admin/channels");
  return listed.body.channels.find((channel: any) => channel.name === name);
}
