import type { ChatMessage, ChatRequest, ChatResponse, ContentPart } from "../../canonical/chat.ts";
import { newId } from "../../lib/random-id.ts";
import { compactionItem } from "./compaction-item.ts";
import type { InputItem } from "./request-schema.ts";
import { responseObject, usageToResponses, type ResponseHead } from "./response-object.ts";

/** What the model is asked to write: a summary that lets another model carry on the work. */
const COMPACTION_PROMPT = `The conversation above is about to be replaced by a summary of it, which is all that will be kept of it. Write that summary for whoever carries on: what was asked and decided, what was done and what came of it (commands, files, tool results that matter, errors), what is still to do, and any fact, name or value needed to continue. Be complete but brief, and write only the summary.`;

/** How each role's turns are labelled in the transcript the model summarises. */
const LABELS: Record<ChatMessage["role"], string> = { system: "instructions", user: "user", assistant: "assistant", tool: "tool" };

/** A part of a turn as transcript parts: text as it is, an image kept as an image, a call and its result spelled out. */
function transcriptPartOf(part: ContentPart): ContentPart {
  switch (part.type) {
    case "tool_call":
      return { type: "text", text: `(called ${part.name} with ${part.arguments}, call ${part.id})` };
    case "tool_result":
      return { type: "text", text: `(result of call ${part.toolCallId}${part.isError ? ", an error" : ""}: ${part.content})` };
    default:
      return part;
  }
}

/** `part` added to `parts`, joined to the text before it so the transcript is one text between images. */
function appendPart(parts: ContentPart[], part: ContentPart): void {
  const last = parts.at(-1);
  if (part.type === "text" && last?.type === "text") last.text += part.text;
  else parts.push(part.type === "text" ? { ...part } : part);
}

/**
 * A conversation as one user turn holding its transcript, then the request for a summary.
 * Written out rather than sent as the turns themselves because the summary is asked of any
 * upstream kind: Anthropic refuses tool calls in a request that offers no tools, and moves
 * system turns and refuses a conversation ending in its own turn, none of which a transcript has.
 */
function transcriptTurnOf(messages: readonly ChatMessage[]): ChatMessage {
  const parts: ContentPart[] = [{ type: "text", text: "<conversation>" }];
  for (const message of messages) {
    appendPart(parts, { type: "text", text: `\n[${LABELS[message.role]}]\n` });
    for (const part of message.parts) appendPart(parts, transcriptPartOf(part));
  }
  appendPart(parts, { type: "text", text: `\n</conversation>\n\n${COMPACTION_PROMPT}` });
  return { role: "user", parts };
}

/**
 * The chat request that compacts a conversation (a Responses body in canonical form): its
 * transcript and the request for a summary, with the caller's model, end user and warnings,
 * and no tools, since the model is to write, not act.
 */
export function compactionRequestOf(conversation: ChatRequest): ChatRequest {
  return {
    model: conversation.model,
    messages: [transcriptTurnOf(conversation.messages)],
    params: {},
    endUser: conversation.endUser,
    unhonoured: conversation.unhonoured,
    showReasoning: false,
    stream: false,
  };
}

/** The user messages of a conversation, as a compacted Response keeps them before its compaction item. */
function userMessagesOf(items: readonly InputItem[]) {
  return items.flatMap((item) => {
    if (item.type !== undefined && item.type !== "message") return [];
    if (item.role !== "user") return [];
    const content = typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : item.content;
    return [{ type: "message" as const, id: newId("msg"), status: "completed" as const, role: "user" as const, content }];
  });
}

/**
 * The body of POST /v1/responses/compact: the conversation's user messages, then one compaction
 * item carrying the model's summary of it all, and the usage of writing that summary.
 */
export function compactedResponseOf(answer: ChatResponse, id: string, conversation: readonly InputItem[]) {
  return {
    id,
    object: "response.compaction" as const,
    created_at: answer.created,
    output: [...userMessagesOf(conversation), compactionItem(summaryOf(answer))],
    usage: usageToResponses(answer.usage ?? NO_USAGE),
  };
}

/** The model's summary: the text of its answer. */
const summaryOf = (answer: ChatResponse) => answer.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

/** Zero usage, shown for an answer that carries none. */
export const NO_USAGE = { inputTokens: 0, outputTokens: 0 };

/**
 * The body of a /v1/responses request whose input ended with a compaction_trigger: a Response
 * whose one output item is the compaction carrying the model's summary, as Codex CLI expects
 * when it compacts through OpenAI's own provider.
 */
export function compactionResponseOf(answer: ChatResponse, head: ResponseHead) {
  return responseObject(head, { status: "completed", output: [compactionItem(summaryOf(answer))], usage: answer.usage ?? NO_USAGE });
}

/**
 * A /v1/responses body (as read, not yet validated) without its last input item, when that item
 * is a compaction_trigger; else undefined. The one look at the last item is all a request
 * without a trigger pays; one anywhere else is refused by the schema, naming it.
 */
export function compactionTriggerTakenOff(raw: unknown): unknown {
  const input = (raw as { input?: unknown }).input;
  if (!Array.isArray(input) || (input.at(-1) as { type?: unknown } | null)?.type !== "compaction_trigger") return undefined;
  return { ...(raw as object), input: input.slice(0, -1) };
}
