import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { jsonFixture } from "../helpers/openai-upstream.ts";
import { answerWithText, MODELS, onlyRequest, postJson, startWorld, type World } from "./_support.ts";

/**
 * Gemini takes OpenAPI's upper-case type names ("OBJECT", "STRING") in its JSON Schema fields
 * too, and Gemini CLI writes its side requests' schemas so: its model router asks every prompt
 * for a JSON complexity score under `responseJsonSchema` with them (the body is the one Gemini
 * CLI 0.61 sent, its system prompt trimmed). OpenAI and Anthropic know only lower-case names.
 */

const CLASSIFIER = jsonFixture("gemini-cli-classifier-request.json") as Record<string, any>;
const ANSWER = '{"complexity_reasoning":"Simple.","complexity_score":10}';

/** The classifier's schema as JSON Schema spells it. */
const LOWER_CASE_SCHEMA = {
  type: "object",
  properties: {
    complexity_reasoning: { type: "string", description: "Brief explanation for the score." },
    complexity_score: { type: "integer", description: "Complexity score from 1-100." },
  },
  required: ["complexity_reasoning", "complexity_score"],
};

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

const classify = (model: string) => postJson(world, `/v1beta/models/${model}:generateContent`, CLASSIFIER);

async function answerText(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return (await response.json()).candidates[0].content.parts.map((part: any) => part.text ?? "").join("");
}

describe("Gemini CLI's router schema, upper-case type names", () => {
  test("reaches an openai upstream in lower case, and as guidance, since its object is open", async () => {
    answerWithText(world, "openai", ANSWER);
    const response = await classify(MODELS.openai);
    expect(await answerText(response)).toBe(ANSWER);
    const format = onlyRequest(world, "openai").body.response_format;
    expect(format.json_schema.schema).toEqual(LOWER_CASE_SCHEMA);
    expect(format.json_schema.strict).toBeUndefined();
    expect(response.headers.get("x-gateway-warnings")).toContain("strict (response schema)");
  });

  test("reaches an anthropic upstream in lower case, its object closed as Anthropic requires", async () => {
    answerWithText(world, "anthropic", ANSWER);
    expect(await answerText(await classify(MODELS.anthropic))).toBe(ANSWER);
    const format = onlyRequest(world, "anthropic").body.output_config.format;
    expect(format.schema).toEqual({ ...LOWER_CASE_SCHEMA, additionalProperties: false });
  });

  test("reaches a gemini upstream as the caller sent it", async () => {
    answerWithText(world, "gemini", ANSWER);
    expect(await answerText(await classify(MODELS.gemini))).toBe(ANSWER);
    expect(onlyRequest(world, "gemini").body.generationConfig.responseJsonSchema).toEqual(CLASSIFIER.generationConfig.responseJsonSchema);
  });
});
