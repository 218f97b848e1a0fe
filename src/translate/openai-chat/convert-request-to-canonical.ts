import type { ChatMessage, ChatRequest, ContentPart, ToolChoice } from "../../canonical/chat.ts";
import type { ChatCompletionRequest } from "./request-schema.ts";

type OpenAiMessage = ChatCompletionRequest["messages"][number];

function partsOf(content: OpenAiMessage["content"]): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part) =>
    part.type === "text" ? { type: "text", text: part.text } : { type: "image", url: part.image_url.url },
  );
}

function messageToCanonical(message: OpenAiMessage): ChatMessage {
  if (message.role === "tool") {
    const content = partsOf(message.content).map((p) => (p.type === "text" ? p.text : "")).join("");
    return { role: "tool", parts: [{ type: "tool_result", toolCallId: message.tool_call_id!, content }] };
  }
  const parts = partsOf(message.content);
  for (const call of message.tool_calls ?? []) {
    parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return { role: message.role === "developer" ? "system" : message.role, parts };
}

function toolChoiceOf(choice: ChatCompletionRequest["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.function.name };
}

/** A validated chat-completions body in the canonical form. */
export function convertOpenAiChatRequestToCanonical(body: ChatCompletionRequest): ChatRequest {
  const stop = body.stop ?? undefined;
  return {
    model: body.model,
    messages: body.messages.map(messageToCanonical),
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
    stream: body.stream === true,
  };
}
