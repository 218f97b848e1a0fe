import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, ToolDefinition, Untranslated } from "../../canonical/chat.ts";
import { isFunctionTool, isFunctionToolCall, isModelledPart, type ChatCompletionRequest } from "./request-schema.ts";
import { nothingUntranslated, severalAnswers } from "../untranslated.ts";
import { openAiEffort } from "../reasoning.ts";

type OpenAiMessage = ChatCompletionRequest["messages"][number];

/** An assistant's refusal, sent back in history: only OpenAI can use it again. */
const REPLAY_PARTS = new Set(["refusal"]);

/** A message's content in canonical parts; parts the canonical form does not carry are noted in `untranslated`. */
function partsOf(content: OpenAiMessage["content"], where: string, untranslated: Untranslated): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  const parts: ContentPart[] = [];
  for (const [j, part] of content.entries()) {
    if (!isModelledPart(part)) (REPLAY_PARTS.has(part.type) ? untranslated.replay : untranslated.input).push(`${where}[${j}] (${part.type})`);
    else if (part.type === "text") parts.push({ type: "text", text: part.text });
    else {
      // The resolution to see an image at (fewer tokens, or finer detail): OpenAI's own setting.
      if (part.image_url.detail !== undefined && part.image_url.detail !== "auto") untranslated.fields.push(`${where}[${j}].image_url.detail`);
      parts.push({ type: "image", url: part.image_url.url });
    }
  }
  return parts;
}

function messageToCanonical(message: OpenAiMessage, i: number, untranslated: Untranslated): ChatMessage {
  const where = `messages[${i}].content`;
  if (message.role === "tool") {
    const content = partsOf(message.content, where, untranslated).map((p) => (p.type === "text" ? p.text : "")).join("");
    return { role: "tool", parts: [{ type: "tool_result", toolCallId: message.tool_call_id!, content }] };
  }
  const parts = partsOf(message.content, where, untranslated);
  for (const [j, call] of (message.tool_calls ?? []).entries()) {
    if (isFunctionToolCall(call)) parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
    else untranslated.input.push(`messages[${i}].tool_calls[${j}] (${call.type})`);
  }
  return { role: message.role === "developer" ? "system" : message.role, parts };
}

/** An OpenAI json_schema format (chat's `response_format.json_schema`, the Responses API's `text.format`) in canonical form. */
export function jsonSchemaFormatOf(format: { name: string; schema?: Record<string, unknown>; strict?: boolean | null }): ResponseFormat {
  return { type: "json_schema", name: format.name, schema: format.schema ?? {}, strict: format.strict ?? undefined };
}

function responseFormatOf(format: ChatCompletionRequest["response_format"]): ResponseFormat | undefined {
  if (format?.type === "json_object") return { type: "json" };
  if (format?.type !== "json_schema") return undefined;
  return jsonSchemaFormatOf(format.json_schema);
}

/** The function tools in canonical form; custom tools, which only OpenAI has, are noted in `untranslated`. */
function toolsOf(tools: NonNullable<ChatCompletionRequest["tools"]>, untranslated: Untranslated): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const [i, tool] of tools.entries()) {
    if (!isFunctionTool(tool)) {
      untranslated.input.push(`tools[${i}] (${tool.type})`);
      continue;
    }
    out.push(functionToolOf(tool.function));
  }
  return out;
}

/** An OpenAI function (chat's `tools[].function`, a Responses API function tool) as a canonical tool. */
export function functionToolOf(fn: { name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null }): ToolDefinition {
  const definition: ToolDefinition = { name: fn.name, description: fn.description ?? undefined, parameters: fn.parameters ?? { type: "object", properties: {} } };
  if (fn.strict === true) definition.strict = true;
  return definition;
}

/**
 * The tools offered and the choice among them. `allowed_tools` narrows the tools a call may
 * use while the list stays whole (for OpenAI's prompt cache); other formats have no such
 * switch, so they are offered only the allowed ones, which is what the model may call.
 */
function toolsAndChoiceOf(body: ChatCompletionRequest, untranslated: Untranslated): Pick<ChatRequest, "tools" | "toolChoice"> {
  const tools = body.tools && toolsOf(body.tools, untranslated);
  const choice = body.tool_choice;
  if (choice === undefined || typeof choice === "string") return { tools, toolChoice: choice };
  if (choice.type === "function") return { tools, toolChoice: { name: choice.function.name } };
  if (choice.type === "custom") {
    untranslated.input.push("tool_choice (custom)");
    return { tools };
  }
  const allowed = new Set(choice.allowed_tools.tools.flatMap((tool) => (tool.function ? [tool.function.name] : [])));
  return { tools: tools?.filter((tool) => allowed.has(tool.name)), toolChoice: choice.allowed_tools.mode };
}

/**
 * The end-user id: `safety_identifier`, which OpenAI now has for exactly this, else `user`.
 * Other formats take one id; a different `user` beside it is noted in `untranslated`.
 */
export function endUserOf(body: Pick<ChatCompletionRequest, "user" | "safety_identifier">, untranslated: Untranslated): ChatRequest["endUser"] {
  const { user, safety_identifier: safetyIdentifier } = body;
  if (safetyIdentifier == null) return user === undefined ? undefined : { id: user, field: "user" };
  if (user !== undefined && user !== safetyIdentifier) untranslated.fields.push("user");
  return { id: safetyIdentifier, field: "safety_identifier" };
}

/** OpenAI's reasoning effort (chat's reasoning_effort, the Responses API's reasoning.effort) as the canonical request's, when it is one the gateway knows. */
export function reasoningOfEffort(value: string | null | undefined): Pick<ChatRequest, "reasoning"> {
  const effort = openAiEffort(value);
  return effort ? { reasoning: { effort } } : {};
}

/** A validated chat-completions body in the canonical form, the body itself kept for an openai upstream. */
export function convertOpenAiChatRequestToCanonical(body: ChatCompletionRequest): ChatRequest {
  const stop = body.stop ?? undefined;
  const untranslated = nothingUntranslated();
  return {
    model: body.model,
    native: { format: "openai", body, untranslated, answers: severalAnswers(body.n, "n", untranslated) },
    messages: body.messages.map((message, i) => messageToCanonical(message, i, untranslated)),
    params: {
      temperature: body.temperature ?? undefined,
      topP: body.top_p ?? undefined,
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
      stop: typeof stop === "string" ? [stop] : stop,
      frequencyPenalty: body.frequency_penalty ?? undefined,
      presencePenalty: body.presence_penalty ?? undefined,
      seed: body.seed ?? undefined,
    },
    ...toolsAndChoiceOf(body, untranslated),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatOf(body.response_format),
    ...reasoningOfEffort(body.reasoning_effort),
    showReasoning: true,
    endUser: endUserOf(body, untranslated),
    stream: body.stream === true,
  };
}
