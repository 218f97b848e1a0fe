import type { ChatRequest, ConversationItem } from "../canonical/chat.ts";

/** Where the caller's format holds its conversation, to name it in a warning. */
export function conversationFieldOf(request: ChatRequest): string {
  if (request.native?.format === "gemini") return "contents";
  return request.native ? "messages" : "input";
}

/**
 * Where the caller put the system message at `index` of the canonical messages, to name it in a
 * warning: `messages[3]`, `input[2]`, `system`. The canonical index is not the caller's (an
 * Anthropic caller's `system` is the first canonical message, a turn of tool results and words
 * is two, a Responses function call joins the answer before it), but each format makes each of
 * its system instructions one system message, in order: the canonical list's k-th is the
 * caller's k-th. Worked out from the caller's body only when a warning is raised.
 */
export function callerPlaceOfSystemMessage(request: ChatRequest, index: number): string {
  let before = 0;
  for (let i = 0; i < index; i++) if (request.messages[i]!.role === "system") before++;
  for (const place of systemPlacesOf(request)) if (before-- === 0) return place;
  return conversationFieldOf(request);
}

/** The caller's system instructions, as their places in its body, in the order they became system messages. */
function* systemPlacesOf(request: ChatRequest): Generator<string> {
  const native = request.native;
  if (!native) {
    const conversation = request.responsesConversation;
    if (!conversation) return;
    if (conversation.instructions) yield "instructions";
    // The Responses it continues are not in the caller's body: the field that brought them is named.
    for (const item of conversation.earlier) if (isSystemItem(item)) yield "previous_response_id";
    yield* systemItemPlaces(conversation.input, "input");
    return;
  }
  const body = native.body;
  if (native.format === "gemini") {
    if (body.systemInstruction != null) yield "systemInstruction";
    return;
  }
  if (native.format === "anthropic" && body.system != null) yield "system";
  yield* systemItemPlaces(body.messages as readonly ConversationItem[], "messages");
}

/** `field[i]` for each system (or OpenAI developer) message among `items`. */
function* systemItemPlaces(items: readonly ConversationItem[], field: string): Generator<string> {
  for (let i = 0; i < items.length; i++) if (isSystemItem(items[i]!)) yield `${field}[${i}]`;
}

const isSystemItem = (item: ConversationItem) => item.role === "system" || item.role === "developer";
