import { firstSchemaError, isErrorStatus, isObjectSchema, jsonFixture, replaySse, sseFixtureEvents, startLoopbackUpstream, type LoopbackBehavior, type LoopbackUpstream, type RecordedRequest } from "./loopback-upstream.ts";

/**
 * A loopback Anthropic upstream for tests: a real HTTP server (Bun.serve on 127.0.0.1,
 * port 0) answering POST /v1/messages and /v1/messages/count_tokens in Anthropic's wire format.
 *
 * - every request is recorded (method, path, lower-cased headers, parsed JSON body);
 * - it checks what the real API checks first: the path, `x-api-key` (when `apiKey` is
 *   given), the `anthropic-version` header, that `max_tokens` and `messages` are present with
 *   roles user/assistant/system, and that each tool_result answers a tool_use of the turn before
 *   (and each tool_use is answered), answering Anthropic's own error bodies; count_tokens
 *   refuses the answer's fields instead ("max_tokens: Extra inputs are not permitted");
 * - structured outputs are checked as the real API checks them: `output_config.format` is
 *   `{type: "json_schema", schema}`, `effort` one of its levels, a tool's `strict` a boolean,
 *   and every object of such a schema (or of a strict tool's input_schema) says
 *   `additionalProperties: false`, else Anthropic's 400;
 * - with `refusesReasoning` it is a model without extended thinking, refusing `thinking` and `effort`;
 *   with `thinksAdaptivelyOnly` one that refuses a thinking budget (Claude Opus 4.7 and later);
 * - count_tokens answers test/fixtures/anthropic-count-tokens.json;
 * - non-streaming answers come from test/fixtures/anthropic-message*.json;
 * - streaming answers (`"stream": true`) replay a recorded SSE fixture
 *   (test/fixtures/anthropic-*.sse, `event:` + `data:` lines) event by event;
 * - per test, `setBehavior` sets a status + error body, delays, other fixtures, a cut-off
 *   stream, or a `script` that answers the request itself (after the header checks).
 *
 * Recording, delays and the SSE replay live in loopback-upstream.ts.
 */

export interface AnthropicUpstreamBehavior extends LoopbackBehavior {
  /**
   * Non-streaming body, or what picks it from the request's body once the checks passed (a
   * tool loop's answers, turn by turn); default: the tools fixture when the request has tools,
   * else the plain one.
   */
  message?: unknown;
  messageFor?: (body: any) => unknown;
  /**
   * The model has no extended thinking (Claude 3.5): `thinking` other than disabled, or an
   * `output_config.effort`, gets Anthropic's 400 for it.
   */
  refusesReasoning?: boolean;
  /** The model thinks adaptively only (Claude Opus 4.7 and later): `thinking.type: "enabled"` gets Anthropic's 400 for it. */
  thinksAdaptivelyOnly?: boolean;
}

/** Anthropic's message refusing a thinking budget (`thinking.type: "enabled"`) to a model that thinks adaptively only. */
export const BUDGET_REFUSAL_MESSAGE = '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';

export interface AnthropicUpstreamOptions extends Partial<AnthropicUpstreamBehavior> {
  /** When set, a request whose `x-api-key` differs gets Anthropic's 401. */
  apiKey?: string;
}

/** `url` is the host root, as an `anthropic` channel's base_url, e.g. http://127.0.0.1:40123 */
export type AnthropicUpstream = LoopbackUpstream<RecordedRequest, AnthropicUpstreamBehavior>;

export const ANTHROPIC_PLAIN_FIXTURE = "anthropic-message.json";
export const ANTHROPIC_TOOLS_FIXTURE = "anthropic-message-tools.json";
export const ANTHROPIC_STREAM_FIXTURE = "anthropic-stream.sse";
export const ANTHROPIC_TOOL_STREAM_FIXTURE = "anthropic-tool-stream.sse";
export const ANTHROPIC_COUNT_FIXTURE = "anthropic-count-tokens.json";

/** Fields of a messages body that count_tokens refuses as extra inputs. */
const NOT_COUNTED_FIELDS = ["max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata"];

/** The request-id header (and error body field) every answer carries. */
const REQUEST_ID = "req_011CSHoEeqs5C35K2UUqR7Fy";

/** The events of an Anthropic SSE fixture: `event` name and parsed `data`, in order. */
export function anthropicFixtureEvents(name: string): { event: string; data: any }[] {
  return sseFixtureEvents(name).map(({ event, data }) => ({ event, data: JSON.parse(data) }));
}

/**
 * A stream fixture (the plain one by default) as a response for a `script`, each event's
 * `data` passed through `edit` first; with `cutBefore`, the stream ends before the first
 * event of that type (a stream the upstream broke off).
 */
export function editedAnthropicStream(edit: (data: any) => unknown, options: { cutBefore?: string; fixture?: string } = {}): Response {
  const events = anthropicFixtureEvents(options.fixture ?? ANTHROPIC_STREAM_FIXTURE);
  const cut = events.findIndex(({ data }) => data.type === options.cutBefore);
  const text = events
    .slice(0, cut === -1 ? undefined : cut)
    .map(({ event, data }) => {
      edit(data);
      return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    })
    .join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

export interface AnthropicSummary {
  text: string;
  stopReason: string | null;
  /** input_tokens as message_start (or the message) reports it; output_tokens from the last message_delta. */
  usage: { input_tokens: number; output_tokens: number };
  toolUses: { id: string; name: string; input: unknown }[];
}

/** What an Anthropic stream fixture says, computed from the file alone (independent of the gateway's code). */
export function summarizeAnthropicStream(name: string): AnthropicSummary {
  const summary: AnthropicSummary = { text: "", stopReason: null, usage: { input_tokens: 0, output_tokens: 0 }, toolUses: [] };
  const json = new Map<number, { id: string; name: string; json: string }>();
  for (const { data } of anthropicFixtureEvents(name)) {
    switch (data.type) {
      case "message_start":
        summary.usage.input_tokens = data.message.usage.input_tokens;
        summary.usage.output_tokens = data.message.usage.output_tokens;
        break;
      case "content_block_start":
        if (data.content_block.type === "tool_use") json.set(data.index, { id: data.content_block.id, name: data.content_block.name, json: "" });
        else if (data.content_block.type === "text") summary.text += data.content_block.text;
        break;
      case "content_block_delta":
        if (data.delta.type === "text_delta") summary.text += data.delta.text;
        else if (data.delta.type === "input_json_delta") json.get(data.index)!.json += data.delta.partial_json;
        break;
      case "message_delta":
        summary.stopReason = data.delta.stop_reason;
        if (data.usage?.output_tokens != null) summary.usage.output_tokens = data.usage.output_tokens;
        if (data.usage?.input_tokens != null) summary.usage.input_tokens = data.usage.input_tokens;
        break;
    }
  }
  summary.toolUses = [...json.values()].map((t) => ({ id: t.id, name: t.name, input: JSON.parse(t.json) }));
  return summary;
}

/** The same summary for a non-streaming message fixture. */
export function summarizeAnthropicMessage(name: string): AnthropicSummary {
  const message = jsonFixture(name);
  return {
    text: message.content.filter((b: any) => b.type === "text").map((b: any) => b.text).join(""),
    stopReason: message.stop_reason,
    usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens },
    toolUses: message.content.filter((b: any) => b.type === "tool_use").map((b: any) => ({ id: b.id, name: b.name, input: b.input })),
  };
}

/** Anthropic's error type and message for the usual statuses. */
const ERRORS: Record<number, [type: string, message: string]> = {
  400: ["invalid_request_error", "messages: text content blocks must be non-empty"],
  401: ["authentication_error", "invalid x-api-key"],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "model: claude-unknown"],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  429: ["rate_limit_error", "This request would exceed the rate limit for your organization of 50 input tokens per minute."],
  529: ["overloaded_error", "Overloaded"],
};

/** Anthropic's own error bodies for the usual statuses. */
export function anthropicErrorBody(status: number, message?: string): unknown {
  const [type, text] = ERRORS[status] ?? ["api_error", "Internal server error"];
  return { type: "error", error: { type, message: message ?? text }, request_id: REQUEST_ID };
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": REQUEST_ID };

function errorResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { "request-id": REQUEST_ID, ...headers } });
}

/**
 * The tool pairing the real API enforces: every tool_use of an assistant turn is answered by
 * a tool_result with its id in the very next user turn, and every tool_result answers a
 * tool_use of the turn just before. Returns Anthropic's message for the first violation.
 */
export function toolPairingError(messages: any[]): string | null {
  const blocks = (message: any): any[] => (Array.isArray(message?.content) ? message.content : []);
  for (const [i, message] of messages.entries()) {
    const results = blocks(message).filter((b) => b?.type === "tool_result");
    if (results.length > 0) {
      const previous = i > 0 && messages[i - 1].role === "assistant" ? blocks(messages[i - 1]) : [];
      const ids = new Set(previous.filter((b) => b?.type === "tool_use").map((b) => b.id));
      for (const result of results) {
        if (!ids.has(result.tool_use_id)) {
          return `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${result.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
    if (message.role === "assistant") {
      const uses = blocks(message).filter((b) => b?.type === "tool_use");
      if (uses.length > 0 && i + 1 < messages.length) {
        const answered = new Set(blocks(messages[i + 1]).filter((b) => b?.type === "tool_result").map((b) => b.tool_use_id));
        const missing = uses.filter((u) => !answered.has(u.id)).map((u) => u.id);
        if (missing.length > 0) {
          return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
        }
      }
    }
  }
  return null;
}

/**
 * What the real API enforces while the model thinks. A tool loop is one assistant turn: the
 * assistant messages since the last user message that answers no tool call. When the request
 * ends answering tool calls, the first message of that turn must begin with its thinking (the
 * model thinks at the start of a turn, and again after a tool result only with interleaved
 * thinking, whose later blocks it takes back but does not require); a thinking block goes
 * only with its signature (this one cannot check a signature against its text: tests compare
 * the blocks sent with those given). Returns Anthropic's message for the first violation.
 */
export function thinkingTurnError(body: any): string | null {
  const thinking = body.thinking?.type;
  if (thinking !== "enabled" && thinking !== "adaptive") return null;
  const blocks = (message: any): any[] => (Array.isArray(message?.content) ? message.content : []);
  const answersCalls = (message: any) => message?.role === "user" && blocks(message).some((b) => b?.type === "tool_result");
  const messages: any[] = body.messages;
  if (!answersCalls(messages.at(-1))) return null;
  let at = messages.length - 1;
  while (at > 0 && (messages[at - 1].role === "assistant" || answersCalls(messages[at - 1]))) at--;
  const loop = messages.slice(at).filter((message) => message.role === "assistant");
  const first = blocks(loop[0])[0]?.type;
  if (first !== "thinking" && first !== "redacted_thinking") {
    return `messages.${messages.indexOf(loop[0])}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). To avoid this requirement, disable \`thinking\`.`;
  }
  for (const message of loop) {
    for (const [j, block] of blocks(message).entries()) {
      const unsigned = (block.type === "thinking" && !block.signature) || (block.type === "redacted_thinking" && !block.data);
      if (unsigned) return `messages.${messages.indexOf(message)}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return null;
}

/**
 * Anthropic's message for the first object schema within `schema` that does not say
 * `additionalProperties: false` (structured outputs refuse open objects), or null.
 */
function openObjectError(schema: unknown, where: string): string | null {
  return firstSchemaError(schema, (node) => {
    if (!isObjectSchema(node)) return null;
    if (node.additionalProperties === true) return `${where}: For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false`;
    return node.additionalProperties === false ? null : `${where}: For 'object' type, 'additionalProperties' must be explicitly set to false`;
  });
}

const EFFORTS = ["low", "medium", "high", "xhigh", "max"];

/** Anthropic's message for the first malformed structured-outputs field (output_config, a tool's strict), or null. */
function structuredOutputsError(body: any): string | null {
  const config = body.output_config;
  if (config !== undefined) {
    if (config === null || typeof config !== "object") return "output_config: Input should be a valid dictionary";
    if (config.effort != null && !EFFORTS.includes(config.effort)) return `output_config.effort: Input should be ${EFFORTS.map((e) => `'${e}'`).join(", ")}`;
    const format = config.format;
    if (format != null) {
      if (format.type !== "json_schema") return "output_config.format.type: Input should be 'json_schema'";
      if (format.schema === null || typeof format.schema !== "object") return "output_config.format.schema: Field required";
      const open = openObjectError(format.schema, "output_config.format.schema");
      if (open) return open;
    }
  }
  for (const [i, tool] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    if (tool?.strict === undefined) continue;
    if (typeof tool.strict !== "boolean") return `tools.${i}.custom.strict: Input should be a valid boolean`;
    const open = tool.strict ? openObjectError(tool.input_schema, `tools.${i}.custom.input_schema`) : null;
    if (open) return open;
  }
  return null;
}

/** Anthropic's message refusing the reasoning settings of a body sent to a model without extended thinking, or null. */
function reasoningRefusal(body: any): string | null {
  if (body.thinking !== undefined && body.thinking?.type !== "disabled") return `'${body.model}' does not support thinking.`;
  if (body.output_config?.effort !== undefined) return "This model does not support the effort parameter.";
  return null;
}

/** Starts a loopback Anthropic upstream. */
export async function startAnthropicUpstream(options: AnthropicUpstreamOptions = {}): Promise<AnthropicUpstream> {
  const { apiKey, ...initial } = options;
  return startLoopbackUpstream<RecordedRequest, AnthropicUpstreamBehavior>({
    initial,
    answer(request, current) {
      const { method, path, headers, body } = request;
      const counting = path === "/v1/messages/count_tokens";
      if (method !== "POST" || (path !== "/v1/messages" && !counting)) {
        return errorResponse(404, anthropicErrorBody(404, "Not Found"));
      }
      if (!headers["x-api-key"] && !headers.authorization) {
        return errorResponse(401, anthropicErrorBody(401, "x-api-key header is required"));
      }
      if (apiKey !== undefined && headers["x-api-key"] !== apiKey) {
        return errorResponse(401, anthropicErrorBody(401));
      }
      if (!headers["anthropic-version"]) {
        return errorResponse(400, anthropicErrorBody(400, "anthropic-version: header is required"));
      }
      if (current.script) return current.script(request);
      if (body === undefined || typeof body !== "object") {
        return errorResponse(400, anthropicErrorBody(400, "There was an issue with your request body: it must be a JSON object."));
      }
      const extra = counting ? NOT_COUNTED_FIELDS.find((field) => field in body) : undefined;
      if (extra) return errorResponse(400, anthropicErrorBody(400, `${extra}: Extra inputs are not permitted`));
      if (!counting && body.max_tokens === undefined) return errorResponse(400, anthropicErrorBody(400, "max_tokens: Field required"));
      if (!Array.isArray(body.messages)) return errorResponse(400, anthropicErrorBody(400, "messages: Field required"));
      if (body.messages.length === 0) return errorResponse(400, anthropicErrorBody(400, "messages: at least one message is required"));
      for (const [i, message] of body.messages.entries()) {
        // Newer models take a system message among the turns (mid-conversation system messages).
        if (message?.role !== "user" && message?.role !== "assistant" && message?.role !== "system") {
          return errorResponse(400, anthropicErrorBody(400, `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`));
        }
      }
      const unpaired = toolPairingError(body.messages) ?? thinkingTurnError(body);
      if (unpaired) return errorResponse(400, anthropicErrorBody(400, unpaired));
      const malformed = structuredOutputsError(body);
      if (malformed) return errorResponse(400, anthropicErrorBody(400, malformed));
      const refused = current.refusesReasoning ? reasoningRefusal(body) : current.thinksAdaptivelyOnly && body.thinking?.type === "enabled" ? BUDGET_REFUSAL_MESSAGE : null;
      if (refused) return errorResponse(400, anthropicErrorBody(400, refused));
      if (isErrorStatus(current.status)) {
        return errorResponse(current.status, current.errorBody ?? anthropicErrorBody(current.status), current.headers);
      }
      if (counting) return Response.json(jsonFixture(ANTHROPIC_COUNT_FIXTURE), { headers: { "request-id": REQUEST_ID, ...current.headers } });
      const wantsTools = Array.isArray(body.tools) && body.tools.length > 0;
      if (body.stream === true) {
        return replaySse(current.streamFixture ?? (wantsTools ? ANTHROPIC_TOOL_STREAM_FIXTURE : ANTHROPIC_STREAM_FIXTURE), current, SSE_HEADERS);
      }
      const message = current.messageFor?.(body) ?? current.message ?? jsonFixture(wantsTools ? ANTHROPIC_TOOLS_FIXTURE : ANTHROPIC_PLAIN_FIXTURE);
      return Response.json(message, { status: current.status, headers: { "request-id": REQUEST_ID, ...current.headers } });
    },
  });
}
