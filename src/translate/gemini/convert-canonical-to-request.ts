import type { ChatRequest, ContentPart, ReasoningRequest } from "../../canonical/chat.ts";
import type { UpstreamWarnings } from "../../upstreams/warnings.ts";
import { parseToolArguments } from "../parse-tool-arguments.ts";
import { systemAndTurns } from "../system-prompt.ts";
import { alternatingTurns } from "../alternating-turns.ts";
import { firstStopSequences } from "../stop-sequences.ts";
import { signatureInCallId } from "./thought-signature-id.ts";
import { jsonObjectOrUndefined } from "../../lib/parse-json.ts";

/** The most stop sequences Gemini's generationConfig takes. */
const GEMINI_MAX_STOP_SEQUENCES = 5;

/** A data: URL as Gemini inline data; any other URL as file data. */
function mediaPartOf(url: string): Record<string, unknown> {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return data ? { inlineData: { mimeType: data[1], data: data[2] } } : { fileData: { fileUri: url } };
}

/**
 * A tool result's text as the object Gemini's functionResponse.response must be. A failed
 * call's goes under `error`, the key Gemini reads a function's error from.
 */
function responseObjectOf(content: string, isError: boolean): unknown {
  // A result that is not a JSON object (plain text) is wrapped.
  const object = jsonObjectOrUndefined(content);
  if (isError) return { error: object ?? content };
  return object ?? { result: content };
}

/**
 * The caller's reasoning as Gemini's thinkingConfig: off (a budget of 0), a budget, or a
 * level (Gemini's highest for `xhigh` and `max`), else the model's choice; with thought summaries when
 * the caller shows thinking. A budget and a level together are a 400, so one is sent.
 */
function thinkingConfigOf(reasoning: ReasoningRequest, show: boolean): Record<string, unknown> {
  if (reasoning.effort === "none") return { thinkingBudget: 0 };
  const config: Record<string, unknown> = {};
  if (reasoning.budgetTokens !== undefined) config.thinkingBudget = reasoning.budgetTokens;
  else if (reasoning.effort) config.thinkingLevel = reasoning.effort === "max" || reasoning.effort === "xhigh" ? "HIGH" : reasoning.effort.toUpperCase();
  if (show) config.includeThoughts = true;
  return config;
}

/** A canonical request as a Gemini generateContent body (the model goes in the URL). */
export function convertCanonicalToGeminiRequest(request: ChatRequest, warnings: UpstreamWarnings): Record<string, unknown> {
  // Gemini pairs a function response with its call by name, so tool_call ids are resolved here.
  const nameOfCall = new Map<string, string>();
  for (const message of request.messages) for (const p of message.parts) if (p.type === "tool_call") nameOfCall.set(p.id, p.name);
  const partOf = (part: ContentPart): Record<string, unknown> => {
    switch (part.type) {
      case "text":
        return { text: part.text };
      case "image":
        return mediaPartOf(part.url);
      case "tool_call": {
        const thoughtSignature = signatureInCallId(part.id);
        return { functionCall: { name: part.name, args: parseToolArguments(part.arguments) }, ...(thoughtSignature ? { thoughtSignature } : {}) };
      }
      case "tool_result":
        return { functionResponse: { name: nameOfCall.get(part.toolCallId) ?? part.toolCallId, response: responseObjectOf(part.content, part.isError === true) } };
    }
  };
  const { system, turns } = systemAndTurns(request, warnings);
  const contents = alternatingTurns(turns, partOf).map(({ role, parts }) => ({ role: role === "assistant" ? "model" : "user", parts }));
  const p = request.params;
  const generationConfig: Record<string, unknown> = {};
  if (p.temperature !== undefined) generationConfig.temperature = p.temperature;
  if (p.topP !== undefined) generationConfig.topP = p.topP;
  if (p.topK !== undefined) generationConfig.topK = p.topK;
  if (p.maxTokens !== undefined) generationConfig.maxOutputTokens = p.maxTokens;
  if (p.stop !== undefined) generationConfig.stopSequences = firstStopSequences(p.stop, GEMINI_MAX_STOP_SEQUENCES, warnings);
  if (p.presencePenalty !== undefined) generationConfig.presencePenalty = p.presencePenalty;
  if (p.frequencyPenalty !== undefined) generationConfig.frequencyPenalty = p.frequencyPenalty;
  if (p.seed !== undefined) generationConfig.seed = p.seed;
  const format = request.responseFormat;
  if (format) generationConfig.responseMimeType = "application/json";
  // responseJsonSchema takes JSON Schema as it is ($ref, additionalProperties...), which the
  // OpenAPI subset of responseSchema would refuse.
  if (format?.type === "json_schema") generationConfig.responseJsonSchema = format.schema;
  if (request.reasoning) generationConfig.thinkingConfig = thinkingConfigOf(request.reasoning, request.showReasoning);
  const body: Record<string, unknown> = { contents, generationConfig };
  if (system !== undefined) body.systemInstruction = { parts: [{ text: system }] };
  if (request.tools) {
    // parametersJsonSchema takes the JSON Schema callers write (const, $ref and $defs, type
    // arrays, additionalProperties), where the OpenAPI subset of `parameters` refuses them.
    body.tools = [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }];
  }
  const choice = request.toolChoice;
  if (choice !== undefined) {
    body.toolConfig = {
      functionCallingConfig:
        typeof choice === "object"
          ? { mode: "ANY", allowedFunctionNames: [choice.name] }
          : { mode: choice === "required" ? "ANY" : choice === "none" ? "NONE" : "AUTO" },
    };
  }
  if (request.endUser) warnings.add(request.endUser.field, "not passed on: the upstream has no field for an end-user id");
  if (request.parallelToolCalls === false && request.tools) warnings.add("parallel_tool_calls", "not supported by the upstream; it may call several tools at once");
  for (const tool of request.tools ?? []) {
    if (tool.strict) warnings.add(`strict (tool ${tool.name})`, "not supported by the upstream; the arguments are not held to the tool's schema");
  }
  return body;
}
