import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, ToolChoice, ToolDefinition } from "../../canonical/chat.ts";
import { WEB_SEARCH_TOOL_TYPES, type InputContent, type InputItem, type ResolvedResponsesRequest } from "./request-schema.ts";
import { endUserOf, jsonSchemaFormatOf, reasoningOfEffort } from "../openai-chat/convert-request-to-canonical.ts";
import { fieldsLeftBehind } from "../carried-fields.ts";
import { nothingUntranslated } from "../untranslated.ts";
import { inputItemsOf } from "./continue-conversation.ts";
import { summaryMessageOf } from "./compaction-item.ts";
import { canonicalToolsOf, chosenToolName, qualifiedToolName, type NamespacedNames } from "./namespaced-tools.ts";

/** Why part of a Responses request reaches no upstream, whatever its kind. */
const NO_PLACE = "the gateway serves responses through chat, which has no place for it";
const NOT_CARRIED = `not passed on: ${NO_PLACE}`;

/**
 * The warning of every request that does not say `store: false` (OpenAI's default is to
 * store): what is kept of the answer, which is less than OpenAI keeps (30 days, everywhere).
 */
const NOT_STORED = "store: the Response is kept an hour, not 30 days, for previous_response_id, item_reference and GET /v1/responses/{id}";

/** A message item's content in canonical parts; a refusal (an earlier answer's) and an image's detail are noted, as they reach no upstream. */
function partsOf(content: string | InputContent[], where: string, notes: string[]): ContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const parts: ContentPart[] = [];
  for (const [j, part] of content.entries()) {
    if (part.type === "input_text" || part.type === "output_text") parts.push({ type: "text", text: part.text });
    else if (part.type === "refusal") notes.push(`${where}[${j}] (refusal): left out: ${NO_PLACE}`);
    else if (part.type === "input_image") {
      if (part.detail != null && part.detail !== "auto") notes.push(`${where}[${j}].detail: ${NOT_CARRIED}`);
      parts.push({ type: "image", url: part.image_url! });
    }
  }
  return parts;
}

/**
 * Items appended to the conversation as canonical messages. A function_call joins the
 * assistant message before it (an answer's text and its calls are one turn, as a chat
 * completion gives them), each function_call_output is a tool message, and a compaction the
 * summary it carries. `where` names an item in a note or a 400.
 */
function appendItems(messages: ChatMessage[], items: readonly InputItem[], where: (i: number) => string, notes: string[]): void {
  for (const [i, item] of items.entries()) {
    if (item.type === "function_call") {
      const name = qualifiedToolName({ name: item.name, namespace: item.namespace ?? undefined });
      const call: ContentPart = { type: "tool_call", id: item.call_id, name, arguments: item.arguments };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.parts.push(call);
      else messages.push({ role: "assistant", parts: [call] });
    } else if (item.type === "reasoning") {
      notes.push(`${where(i)} (reasoning): left out: an earlier answer's thinking, which no upstream takes back`);
    } else if (item.type === "compaction") {
      messages.push(summaryMessageOf(item.encrypted_content, where(i)));
    } else if (item.type === "function_call_output") {
      const content = typeof item.output === "string" ? item.output : item.output.map((part) => part.text).join("");
      messages.push({ role: "tool", parts: [{ type: "tool_result", toolCallId: item.call_id, content }] });
    } else {
      const role = item.role === "developer" ? "system" : item.role;
      messages.push({ role, parts: partsOf(item.content, `${where(i)}.content`, notes) });
    }
  }
}

/**
 * The conversation in canonical messages: `instructions` first, as a system message, then the
 * conversation of the Responses it continues (`earlier`), then the items of `input`. What the
 * earlier conversation loses is said in one note, not one per turn, which a long chain would repeat.
 */
function messagesOf(body: ResolvedResponsesRequest, earlier: readonly InputItem[], input: readonly InputItem[], notes: string[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: "system", parts: [{ type: "text", text: body.instructions }] });
  if (earlier.length > 0) {
    const lost: string[] = [];
    appendItems(messages, earlier, (i) => `conversation[${i}]`, lost);
    if (lost.length > 0) notes.push(`previous_response_id: ${lost.length} part(s) of the earlier conversation (reasoning, refusals, image details) left out, as when sent in input`);
  }
  appendItems(messages, input, (i) => `input[${i}]`, notes);
  return messages;
}

function responseFormatOf(format: NonNullable<ResolvedResponsesRequest["text"]>["format"]): ResponseFormat | undefined {
  if (format?.type === "json_object") return { type: "json" };
  return format?.type === "json_schema" ? jsonSchemaFormatOf(format) : undefined;
}

type RequestTool = NonNullable<ResolvedResponsesRequest["tools"]>[number];
type WebSearchToolType = (typeof WEB_SEARCH_TOOL_TYPES)[number];
const isWebSearch = (tool: RequestTool): tool is Extract<RequestTool, { type: WebSearchToolType }> => (WEB_SEARCH_TOOL_TYPES as readonly string[]).includes(tool.type);

/**
 * The request's tools in canonical form, none when there are none to serve: web search, which
 * the gateway does not run, is left out and named in the notes, and the model answers without it.
 */
function servedToolsOf(tools: ResolvedResponsesRequest["tools"], notes: string[]): ToolDefinition[] | undefined {
  if (!tools) return undefined;
  const served: Exclude<RequestTool, { type: WebSearchToolType }>[] = [];
  for (const [i, tool] of tools.entries()) {
    if (isWebSearch(tool)) notes.push(`tools[${i}]: '${tool.type}' left out: the gateway does not run web search, and the model answered without it`);
    else served.push(tool);
  }
  return served.length > 0 ? canonicalToolsOf(served) : undefined;
}

function toolChoiceOf(choice: ResolvedResponsesRequest["tool_choice"], namespaced: NamespacedNames | undefined): ToolChoice | undefined {
  if (choice == null || typeof choice === "string") return choice ?? undefined;
  return { name: chosenToolName(choice.name, namespaced) };
}

/**
 * What the request asks for that no upstream receives: fields the canonical form has no
 * place for, a second end-user id, and storage, which OpenAI does by default.
 */
function unhonouredOf(body: ResolvedResponsesRequest, fields: string[], notes: string[]): string[] {
  const unhonoured = [...fieldsLeftBehind("responses", body), ...fields].map((field) => `${field}: ${NOT_CARRIED}`);
  if (body.store !== false) unhonoured.push(NOT_STORED);
  return [...unhonoured, ...notes];
}

/**
 * A validated Responses API body, its item references resolved, in canonical form, after the
 * conversation of the Responses it continues (`earlier`, see conversationBefore). There is no
 * native body: no upstream speaks this format, so every upstream kind, an openai one
 * included, gets a translation. `namespaced` is namespacedNamesOf(body.tools).
 */
export function convertResponsesRequestToCanonical(body: ResolvedResponsesRequest, earlier: readonly InputItem[] = [], namespaced?: NamespacedNames): ChatRequest {
  const notes: string[] = [];
  // Where endUserOf notes a second end-user id, as it does for chat.
  const untranslated = nothingUntranslated();
  const input = inputItemsOf(body.input);
  const messages = messagesOf(body, earlier, input, notes);
  const request: ChatRequest = {
    model: body.model,
    messages,
    params: { temperature: body.temperature ?? undefined, topP: body.top_p ?? undefined, maxTokens: body.max_output_tokens ?? undefined },
    tools: servedToolsOf(body.tools, notes),
    toolChoice: toolChoiceOf(body.tool_choice, namespaced),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatOf(body.text?.format),
    ...reasoningOfEffort(body.reasoning?.effort),
    // A summary asked for is the upstream's thinking as it shows it: a summary (Gemini's), or the thinking itself.
    showReasoning: body.reasoning?.summary != null,
    endUser: endUserOf(body, untranslated),
    stream: body.stream === true,
  };
  request.unhonoured = unhonouredOf(body, untranslated.fields, notes);
  request.responsesConversation = { instructions: Boolean(body.instructions), earlier, input };
  return request;
}
