import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer } from "../helpers/gateway.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { ANTHROPIC_PLAIN_FIXTURE } from "../helpers/anthropic-upstream.ts";
import { MODELS, onlyRequest, rejectionOf, startWorld, type World } from "./_support.ts";

/**
 * Structured outputs across formats: OpenAI's response_format json_schema and Anthropic's
 * output_config.format (the answer's text held to a JSON Schema), through the official SDKs,
 * against loopback upstreams that check the fields as the providers do.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const hello = [{ role: "user" as const, content: "Where is the Eiffel Tower?" }];
const citySchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const warningsOf = (response: Response) => response.headers.get("x-gateway-warnings") ?? "";

/** The Anthropic upstream's plain answer, with `text` as its one text block (a JSON answer). */
const anthropicAnswering = (text: string) => ({ ...jsonFixture(ANTHROPIC_PLAIN_FIXTURE), content: [{ type: "text", text }] });

describe("openai caller -> anthropic upstream", () => {
  test("chat.completions.parse() with a json_schema response_format: output_config.format upstream, `parsed` the object", async () => {
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const { data, response } = await world.openai.chat.completions
      .parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema, strict: true } } })
      .withResponse();
    expect(data.choices[0]!.message.parsed as unknown).toEqual({ city: "Paris" });
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(response.headers.get("x-gateway-warnings")).toBeNull();
    const body = onlyRequest(world, "anthropic").body;
    expect(body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
    expect(body).not.toHaveProperty("response_format");
  });

  test("streamed, the format goes upstream the same way", async () => {
    const response = await world.gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(world.key),
      body: JSON.stringify({ model: MODELS.anthropic, messages: hello, stream: true, response_format: { type: "json_schema", json_schema: { name: "city", schema: citySchema } } }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("data: [DONE]");
    expect(onlyRequest(world, "anthropic").body.output_config).toEqual({ format: { type: "json_schema", schema: citySchema } });
  });

  test("a schema that leaves objects open by default has them closed, as Anthropic requires; the caller's schema is otherwise as sent", async () => {
    const loose = {
      type: "object",
      properties: { city: { type: "string" }, where: { type: "object", properties: { lat: { type: "number" } } }, tags: { type: "array", items: { type: "object", properties: { tag: { type: "string" } } } } },
      required: ["city"],
    };
    world.upstreams.anthropic.setBehavior({ message: anthropicAnswering('{"city":"Paris"}') });
    const completion = await world.openai.chat.completions.parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: loose } } });
    expect(completion.choices[0]!.message.parsed as unknown).toEqual({ city: "Paris" });
    expect(onlyRequest(world, "anthropic").body.output_config.format.schema).toEqual({
      type: "object",
      properties: {
        city: { type: "string" },
        where: { type: "object", properties: { lat: { type: "number" } }, additionalProperties: false },
        tags: { type: "array", items: { type: "object", properties: { tag: { type: "string" } }, additionalProperties: false } },
      },
      required: ["city"],
      additionalProperties: false,
    });
  });

  test("a schema Anthropic refuses (an object left open on purpose) is the upstream's 400, to the caller as a 400", async () => {
    const open = { type: "object", properties: { city: { type: "string" } }, additionalProperties: true };
    const error = await rejectionOf(
      world.openai.chat.completions.parse({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_schema", json_schema: { name: "city", schema: open } } }),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: 400 });
    expect(error.error.message).toContain("'additionalProperties: true' is not supported");
    expect(onlyRequest(world, "anthropic").body.output_config.format.schema).toEqual(open);
  });

  test("json_object, which has no Anthropic equivalent without a schema, is still named in x-gateway-warnings", async () => {
    const { response } = await world.openai.chat.completions.create({ model: MODELS.anthropic, messages: hello, response_format: { type: "json_object" } }).withResponse();
    expect(warningsOf(response)).toContain("response_format: the upstream holds answers to JSON only against a schema");
    expect(onlyRequest(world, "anthropic").body).not.toHaveProperty("output_config");
  });
});
