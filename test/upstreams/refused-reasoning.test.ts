import { describe, expect, test } from "bun:test";
import { remedyForRefusedReasoning } from "../../src/upstreams/refused-reasoning.ts";
import { UpstreamError } from "../../src/upstreams/upstream-error.ts";

/**
 * Which upstream 400s say the model does not take the reasoning setting it was sent, and what
 * the setting becomes for it: the providers' documented refusals, each as a whole, and nothing
 * else that mentions thinking.
 */

const status400 = (message: string, param?: string, code?: string) => new UpstreamError("status", message, 400, undefined, param, code);

describe("openai", () => {
  test("its unsupported_parameter for reasoning_effort", () => {
    expect(remedyForRefusedReasoning(status400("Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort", "unsupported_parameter"), "openai")).toBe("leave out");
  });

  test("not a value the model lacks, another parameter, or the words without the field and code", () => {
    expect(remedyForRefusedReasoning(status400("Unsupported value: 'reasoning_effort' does not support 'none' with this model.", "reasoning_effort", "unsupported_value"), "openai")).toBeUndefined();
    expect(remedyForRefusedReasoning(status400("Unsupported parameter: 'stop' is not supported with this model.", "stop", "unsupported_parameter"), "openai")).toBeUndefined();
    expect(remedyForRefusedReasoning(status400("Unsupported parameter: 'reasoning_effort' is not supported with this model."), "openai")).toBeUndefined();
  });
});

describe("anthropic", () => {
  test("a model without extended thinking, adaptive thinking or the effort parameter", () => {
    for (const message of ["'claude-3-5-haiku-20241022' does not support thinking.", "adaptive thinking is not supported on this model", "This model does not support the effort parameter."]) {
      expect(remedyForRefusedReasoning(status400(message), "anthropic")).toBe("leave out");
    }
  });

  test("a budget to a model that thinks adaptively only, which is sent adaptive thinking instead", () => {
    const message = '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
    expect(remedyForRefusedReasoning(status400(message), "anthropic")).toBe("adaptive");
  });

  test("not another thinking error, nor a message that only begins alike", () => {
    const others = [
      '"thinking.type.enabled" is not supported for this model.',
      '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
      "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`.",
      "adaptive thinking is not supported on this model when tool_choice forces a tool",
    ];
    for (const message of others) expect(remedyForRefusedReasoning(status400(message), "anthropic")).toBeUndefined();
  });
});

describe("gemini", () => {
  test("a thinkingLevel to a model before Gemini 3, or thinking to one that does not think", () => {
    for (const message of ["Thinking level is not supported for this model.", "thinking_config is not supported.", "Thinking is not enabled for models/gemini-2.0-flash-preview-image-generation"]) {
      expect(remedyForRefusedReasoning(status400(message), "gemini")).toBe("leave out");
    }
  });

  test("not a budget out of range, or turning off a model that always thinks", () => {
    for (const message of ["The thinking budget 100000 is invalid. Please choose a value between 0 and 24576.", "Budget 0 is invalid. This model only works in thinking mode."]) {
      expect(remedyForRefusedReasoning(status400(message), "gemini")).toBeUndefined();
    }
  });
});

test("only a 400 the upstream answered", () => {
  const message = "Thinking level is not supported for this model.";
  expect(remedyForRefusedReasoning(new UpstreamError("status", message, 500), "gemini")).toBeUndefined();
  expect(remedyForRefusedReasoning(new UpstreamError("protocol", message), "gemini")).toBeUndefined();
});
