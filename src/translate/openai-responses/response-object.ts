import type { ChatRequest, FinishReason, ToolDefinition, Usage } from "../../canonical/chat.ts";
import type { ResponsesRequest } from "./request-schema.ts";
import type { UsageField } from "../relay-native.ts";
import type { NamespacedNames } from "./namespaced-tools.ts";
import { functionToolOf } from "../openai-chat/convert-request-to-canonical.ts";

/**
 * The request's settings that a Response object repeats (the SDK's `Response` declares them),
 * as they were in effect: the caller's, with the variant's defaults where it left one out.
 */
export type EchoedSettings = Record<string, unknown>;

type RequestTool = NonNullable<ResponsesRequest["tools"]>[number];

/** A function tool as a Response repeats it: every field there, as the model was offered it. */
const echoedFunction = (tool: ToolDefinition) => ({
  type: "function",
  name: tool.name,
  description: tool.description ?? null,
  parameters: tool.parameters,
  strict: tool.strict ?? false,
});

/** A function of the caller's as the model was offered it, but under its own name. */
const echoedOwnFunction = (fn: Extract<RequestTool, { type: "function" }>) => echoedFunction(functionToolOf(fn));

/**
 * The tools as the caller sent them: a namespace with its functions, not its functions under
 * the names they went upstream by. A request without namespaces offered its tools under their
 * own names, so those are repeated as made. Web search, the one other kind taken, ran nowhere
 * and is not repeated.
 */
function echoedToolsOf(body: ResponsesRequest, request: ChatRequest, namespaced: NamespacedNames | undefined) {
  if (!namespaced) return (request.tools ?? []).map(echoedFunction);
  const echoed: Record<string, unknown>[] = [];
  for (const tool of body.tools ?? []) {
    if (tool.type === "function") echoed.push(echoedOwnFunction(tool));
    else if (tool.type === "namespace") echoed.push({ type: "namespace", name: tool.name, description: tool.description ?? null, tools: tool.tools.map(echoedOwnFunction) });
  }
  return echoed;
}

/** What a Response object says of the request that made it; `namespaced` is namespacedNamesOf(body.tools). */
export function echoedSettingsOf(body: ResponsesRequest, request: ChatRequest, namespaced?: NamespacedNames): EchoedSettings {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: request.params.maxTokens ?? null,
    temperature: request.params.temperature ?? null,
    top_p: request.params.topP ?? null,
    tools: echoedToolsOf(body, request, namespaced),
    tool_choice: body.tool_choice ?? "auto",
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    text: { format: body.text?.format ?? { type: "text" } },
    metadata: body.metadata ?? {},
    store: body.store ?? true,
    previous_response_id: body.previous_response_id ?? null,
    background: false,
    truncation: "disabled",
    ...(body.user !== undefined ? { user: body.user } : {}),
    ...(body.safety_identifier != null ? { safety_identifier: body.safety_identifier } : {}),
  };
}

/** Canonical usage as the Responses API writes it. */
export function usageToResponses(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Where a Response object carries its usage. */
export const RESPONSES_USAGE_FIELD: UsageField = { name: "usage", counts: ["input_tokens", "output_tokens", "total_tokens"], render: usageToResponses };

/** Why an answer that ended early is incomplete, or null for one that finished: the status of its Response. */
export function incompleteReasonOf(finish: FinishReason): "max_output_tokens" | "content_filter" | null {
  if (finish === "length") return "max_output_tokens";
  return finish === "content_filter" ? "content_filter" : null;
}

/** Who a Response belongs to and when it began: the same in each of a stream's events. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  /** The public model ID the caller asked for. */
  model: string;
  echo: EchoedSettings;
  /** The request's namespaced functions, for writing their calls within their namespaces. */
  namespaced?: NamespacedNames;
}

/** The id of the Response a request makes: its request id's, so the two can be matched. */
export function responseIdOf(requestId: string): string {
  return `resp_${requestId.startsWith("req_") ? requestId.slice(4) : requestId}`;
}

/** A Response object as the gateway writes it, its output items of type `Item`. */
export type ResponseObject<Item> = ReturnType<typeof responseObject<Item>>;

/** A Response object in any state: in progress (no usage yet), completed, incomplete or failed. */
export function responseObject<Item>(
  head: ResponseHead,
  state: { status: "in_progress" | "completed" | "incomplete" | "failed"; output: Item[]; usage: Usage | null; incompleteReason?: string | null; error?: string },
) {
  return {
    id: head.id,
    object: "response",
    created_at: head.createdAt,
    status: state.status,
    error: state.error === undefined ? null : { code: "server_error", message: state.error },
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    model: head.model,
    output: state.output,
    usage: state.usage ? usageToResponses(state.usage) : null,
    ...head.echo,
  };
}
