import type { ChatResponse } from "../../canonical/chat.ts";
import { newId } from "../../lib/random-id.ts";
import { UNEXPLAINED_REFUSAL } from "../openai-chat/convert-response.ts";
import { incompleteReasonOf, responseObject, type ResponseHead } from "./response-object.ts";
import { callNameOf, type NamespacedNames } from "./namespaced-tools.ts";

/** One content part of an output message: text, or a refusal's words. */
export type OutputContent = { type: "output_text"; text: string; annotations: unknown[] } | { type: "refusal"; refusal: string };

type ItemStatus = "in_progress" | "completed" | "incomplete";

/** An output message item. */
export function messageItem(id: string, content: OutputContent[], status: ItemStatus) {
  return { type: "message" as const, id, status, role: "assistant" as const, content };
}

/**
 * An output function_call item; `callId` is the id a function_call_output answers, and a call of
 * a namespace's function (by its qualified name, see `namespaced`) is named within its namespace.
 */
export function functionCallItem(id: string, call: { callId: string; name: string; arguments: string }, status: ItemStatus, namespaced?: NamespacedNames) {
  return { type: "function_call" as const, id, call_id: call.callId, ...callNameOf(call.name, namespaced), arguments: call.arguments, status };
}

/** An output reasoning item: the model's thinking, as far as the upstream shows it, as one summary part. */
export function reasoningItem(id: string, text: string) {
  return { type: "reasoning" as const, id, summary: [{ type: "summary_text" as const, text }] };
}

/** Any output item the gateway writes. */
export type OutputItem = ReturnType<typeof messageItem> | ReturnType<typeof functionCallItem> | (ReturnType<typeof reasoningItem> & { status?: ItemStatus });

/** An output_text part (the Responses API's annotations are citations, which the gateway never has). */
export const outputText = (text: string): OutputContent => ({ type: "output_text", text, annotations: [] });

/**
 * A canonical answer's parts as output items, in order: each run of thinking one reasoning
 * item, each run of text one message, each tool call one function_call, and a refusal's words
 * a refusal part of the last message. An incomplete answer's last item is the one cut short.
 */
function outputItemsOf(response: ChatResponse, namespaced: NamespacedNames | undefined): OutputItem[] {
  const items: OutputItem[] = [];
  let message: OutputContent[] | undefined;
  let reasoning: ReturnType<typeof reasoningItem> | undefined;
  const openMessage = () => {
    if (!message) items.push(messageItem(newId("msg"), (message = []), "completed"));
    return message;
  };
  for (const part of response.content) {
    if (part.type === "reasoning") {
      message = undefined;
      if (reasoning) reasoning.summary[0]!.text += part.text;
      else items.push((reasoning = reasoningItem(newId("rs"), part.text)));
      continue;
    }
    reasoning = undefined;
    if (part.type === "text") {
      const content = openMessage();
      const last = content.at(-1);
      if (last?.type === "output_text") last.text += part.text;
      else content.push(outputText(part.text));
    } else if (part.type === "tool_call") {
      message = undefined;
      items.push(functionCallItem(newId("fc"), { callId: part.id, name: part.name, arguments: part.arguments }, "completed", namespaced));
    }
  }
  if (response.finishReason === "refusal") openMessage().push({ type: "refusal", refusal: response.refusal || UNEXPLAINED_REFUSAL });
  const last = items.at(-1);
  if (last && incompleteReasonOf(response.finishReason)) last.status = "incomplete";
  return items;
}

/** A canonical response as a Response object of the Responses API. */
export function convertCanonicalToResponsesResponse(response: ChatResponse, head: ResponseHead) {
  const incompleteReason = incompleteReasonOf(response.finishReason);
  return responseObject(head, {
    status: incompleteReason ? "incomplete" : "completed",
    output: outputItemsOf(response, head.namespaced),
    usage: response.usage ?? { inputTokens: 0, outputTokens: 0 },
    incompleteReason,
  });
}
