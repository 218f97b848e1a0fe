import type { ChatMessage, ChatRequest, ContentPart, ToolDefinition } from "../../canonical/chat.ts";
import type { UpstreamWarnings } from "../../upstreams/warnings.ts";
import { parseToolArguments } from "../parse-tool-arguments.ts";
import { systemAndTurns } from "../system-prompt.ts";
import { conversationFieldOf } from "../caller-places.ts";
import { alternatingTurns } from "../alternating-turns.ts";
import { stopSequencesWithText } from "../stop-sequences.ts";
import { closeObjectSchemas } from "./close-object-schemas.ts";
import { answeredToolLoop, firstToolCallId } from "../../canonical/answered-tool-calls.ts";

/** Anthropic requires max_tokens; this is sent when the caller's format did not need one. */
const DEFAULT_MAX_TOKENS = 4096;

/** The least thinking budget Anthropic takes. */
const MIN_THINKING_BUDGET = 1024;

type Block = Record<string, unknown>;

/** One turn of an Anthropic messages body, as built here. */
interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** An Anthropic messages body, as built here. */
type AnthropicRequest = Record<string, unknown> & { messages: AnthropicMessage[] };

function imageBlockOf(url: string): Block {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return data
    ? { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } }
    : { type: "image", source: { type: "url", url } };
}

function blockOf(part: ContentPart): Block {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return imageBlockOf(part.url);
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: parseToolArguments(part.arguments) };
    case "tool_result":
      return { type: "tool_result", tool_use_id: part.toolCallId, content: part.content, ...(part.isError ? { is_error: true } : {}) };
  }
}

/**
 * A canonical tool as an Anthropic one, its inputs held to the schema (strict) when the caller
 * asked; a strict tool's schema follows the rules of structured outputs, as a format's does.
 */
function toolOf(tool: ToolDefinition): Block {
  const out: Block = { name: tool.name, description: tool.description, input_schema: tool.parameters };
  if (tool.strict) {
    out.input_schema = closeObjectSchemas(tool.parameters);
    out.strict = true;
  }
  return out;
}

/**
 * Names a conversation that ends with an assistant turn (as sent, merged and without empty
 * turns), for a request to be answered: Anthropic continues that turn as a prefill where the
 * caller's own provider answers it with a new one. A count of tokens continues nothing.
 */
export function warnOfContinuedTurn(request: ChatRequest, messages: readonly AnthropicMessage[], warnings: UpstreamWarnings): void {
  if (messages.at(-1)?.role !== "assistant") return;
  warnings.add(conversationFieldOf(request), "ends with an assistant turn, which the upstream continues as the start of its answer (a prefill); an upstream of the caller's format answers it with a turn of its own");
}

/**
 * A canonical request as an Anthropic messages body. System messages become `system`; tool
 * messages become user turns of tool_result blocks; turns alternate (alternatingTurns).
 */
export function convertCanonicalToAnthropicRequest(request: ChatRequest, upstreamModel: string, warnings: UpstreamWarnings): AnthropicRequest {
  const { system, turns } = systemAndTurns(request, warnings);
  const messages: AnthropicMessage[] = alternatingTurns(turns, blockOf).map(({ role, parts }) => ({ role, content: parts }));
  const p = request.params;
  const body: AnthropicRequest = { model: upstreamModel, max_tokens: p.maxTokens ?? DEFAULT_MAX_TOKENS, messages };
  if (system !== undefined) body.system = system;
  if (p.temperature !== undefined) {
    if (p.temperature > 1) warnings.add("temperature", `clamped from ${p.temperature} to 1, the upstream's maximum`);
    body.temperature = Math.min(p.temperature, 1);
  }
  // A top_p of 1 keeps every token, as no top_p does; Claude Sonnet 4.5 and later refuse
  // temperature and top_p together, and Variant A fills both.
  if (p.topP !== undefined && p.topP < 1) body.top_p = p.topP;
  if (p.topK !== undefined) body.top_k = p.topK;
  const stop = p.stop && stopSequencesWithText(p.stop, warnings);
  if (stop && stop.length > 0) body.stop_sequences = stop;
  if (p.frequencyPenalty !== undefined) warnings.add("frequency_penalty", "not supported by the upstream; ignored");
  if (p.presencePenalty !== undefined) warnings.add("presence_penalty", "not supported by the upstream; ignored");
  if (p.seed !== undefined) warnings.add("seed", "not supported by the upstream; ignored");
  if (request.tools) {
    body.tools = request.tools.map(toolOf);
  }
  const choice = request.toolChoice;
  const oneCallOnly = request.parallelToolCalls === false && request.tools !== undefined && choice !== "none";
  if (choice !== undefined || oneCallOnly) {
    body.tool_choice = {
      ...(typeof choice === "object" ? { type: "tool", name: choice.name } : { type: choice === "required" ? "any" : (choice ?? "auto") }),
      ...(oneCallOnly ? { disable_parallel_tool_use: true } : {}),
    };
  }
  const format = request.responseFormat;
  // Anthropic's structured outputs always hold the answer to the schema, strict or not.
  if (format?.type === "json_schema") body.output_config = { format: { type: "json_schema", schema: closeObjectSchemas(format.schema) } };
  else if (format) warnings.add("response_format", "the upstream holds answers to JSON only against a schema (json_schema); this answer is not held to JSON");
  if (request.endUser) body.metadata = { user_id: request.endUser.id };
  if (request.stream) body.stream = true;
  applyThinking(request, body, warnings);
  return body;
}

/**
 * The kept thinking of the tool loop the request continues put back at the start of the
 * Anthropic turn of each answer it was kept for, found by the answer's first tool call. While
 * it thinks, Anthropic wants the loop's first answer back as it was made, its signed thinking
 * first, and refuses it otherwise (400 "Expected `thinking` or `redacted_thinking`"); with
 * interleaved thinking each later answer had its own, which goes back where it was made, as
 * none may be left out or moved. The other formats have no place for that signature, so a
 * request translated from one has it only as the gateway kept it (ChatMessage.signedThinking).
 */
function putBackKeptThinking(loop: readonly ChatMessage[], messages: AnthropicMessage[]): void {
  const keptByCall = new Map(loop.flatMap((message) => (message.signedThinking ? [[firstToolCallId(message.parts), message.signedThinking] as const] : [])));
  for (const turn of messages) {
    const kept = turn.role === "assistant" ? keptByCall.get(turn.content.find((block) => block.type === "tool_use")?.id as string | undefined) : undefined;
    if (kept) turn.content = [...kept, ...turn.content];
  }
}

/**
 * The caller's reasoning as Anthropic's thinking: off; a budget, kept under max_tokens (which
 * counts it) and at least Anthropic's least; or adaptive, at the caller's effort or the
 * model's own. Anthropic does not think before a forced tool call, and a thinking model
 * takes no temperature but 1, no top_k and no top_p under 0.95: those are left out, each said
 * (Variant A's default temperature, 0.7, included).
 */
function applyThinking(request: ChatRequest, body: Record<string, unknown>, warnings: UpstreamWarnings): void {
  const reasoning = request.reasoning;
  if (!reasoning) return;
  // A same-format caller's body is laid over this one: an effort of its own, without
  // thinking, is not made into thinking it did not ask for (and be billed for).
  if (request.native?.format === "anthropic" && request.native.body.thinking === undefined) return;
  if (reasoning.effort === "none") {
    body.thinking = { type: "disabled" };
    return;
  }
  const forced = (body.tool_choice as { type?: string } | undefined)?.type;
  if (forced === "any" || forced === "tool") {
    warnings.add("reasoning", "not passed on: the upstream does not think before a tool call the request forces");
    return;
  }
  const loop = answeredToolLoop(request.messages);
  // The loop's first answer comes back with its thinking, or thinking stays off: Anthropic takes a tool loop without it.
  if (loop && !loop[0]!.signedThinking) {
    warnings.add("reasoning", "not passed on for this turn: the upstream, thinking, needs back its signed thinking from the tool calls answered here, which the caller's format does not carry and the gateway did not keep");
    return;
  }
  if (reasoning.budgetTokens !== undefined) {
    const maxTokens = body.max_tokens as number;
    const budget = Math.min(reasoning.budgetTokens, maxTokens - 1);
    if (budget < MIN_THINKING_BUDGET) {
      warnings.add("reasoning", `not passed on: the upstream's thinking budget is at least ${MIN_THINKING_BUDGET} tokens and below max_tokens (${maxTokens})`);
      return;
    }
    if (budget < reasoning.budgetTokens) warnings.add("reasoning", `thinking budget lowered from ${reasoning.budgetTokens} to ${budget} tokens, below max_tokens`);
    body.thinking = { type: "enabled", budget_tokens: budget };
  } else {
    body.thinking = { type: "adaptive" };
    const effort = reasoning.effort;
    if (effort) body.output_config = { ...(body.output_config as object | undefined), effort: effort === "minimal" ? "low" : effort };
  }
  // Only once thinking is on: the blocks are wanted back while it thinks, and nowhere else.
  if (loop) putBackKeptThinking(loop, body.messages as AnthropicMessage[]);
  const refused: [field: string, refuses: (value: number) => boolean, takes: string][] = [
    ["temperature", (value) => value !== 1, "only 1"],
    ["top_k", () => true, "none"],
    ["top_p", (value) => value < 0.95, "only 0.95 to 1"],
  ];
  for (const [field, refuses, takes] of refused) {
    if (typeof body[field] !== "number" || !refuses(body[field])) continue;
    delete body[field];
    warnings.add(field, `not passed on: the upstream takes ${takes} while the model thinks`);
  }
}
