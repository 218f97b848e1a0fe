import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, ToolChoice, Untranslated } from "../../canonical/chat.ts";
import { isModelledPart, type ChatCompletionRequest } from "./request-schema.ts";

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
    else parts.push(part.type === "text" ? { type: "text", text: part.text } : { type: "image", url: part.image_url.url });
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
  for (const call of message.tool_calls ?? []) {
    parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return { role: message.role === "developer" ? "system" : message.role, parts };
}

function responseFormatOf(format: ChatCompletionRequest["response_format"]): ResponseFormat | undefined {
  if (format?.type === "json_object") return { type: "json" };
  if (format?.type !== "json_schema") return undefined;
  const { name, schema, strict } = format.json_schema;
  return { type: "json_schema", name, schema: schema ?? {}, strict: strict ?? undefined };
}

function toolChoiceOf(choice: ChatCompletionRequest["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.function.name };
}

/** A validated chat-completions body in the canonical form, the body itself kept for an openai upstream. */
export function convertOpenAiChatRequestToCanonical(body: ChatCompletionRequest): ChatRequest {
  const stop = body.stop ?? undefined;
  const untranslated: Untranslated = { replay: [], input: [] };
  return {
    model: body.model,
    native: { format: "openai", body, untranslated },
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
    tools: body.tools?.map((t) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters ?? { type: "object", properties: {} },
    })),
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatOf(body.response_format),
    stream: body.stream === true,
  };
}
