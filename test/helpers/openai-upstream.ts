import { firstSchemaError, isErrorStatus, isObjectSchema, jsonFixture, replaySse, sseFixtureEvents, startLoopbackUpstream, type LoopbackBehavior, type LoopbackUpstream, type RecordedRequest } from "./loopback-upstream.ts";

/**
 * A loopback OpenAI-compatible upstream for tests: a real HTTP server (Bun.serve on
 * 127.0.0.1, port 0) answering POST /v1/chat/completions in OpenAI's wire format.
 *
 * - every request is recorded (method, path, lower-cased headers, parsed JSON body);
 * - it checks the tool-call pairing the real API enforces (each assistant tool_calls message
 *   followed at once by a tool message per call), answering OpenAI's own 400;
 * - it holds a strict schema (response_format json_schema, a function tool) to OpenAI's
 *   rules: every object closed (`additionalProperties: false`) and every property required;
 * - with `refusesReasoning` it is a model that does not reason, refusing `reasoning_effort`;
 * - non-streaming answers come from test/fixtures/openai-chat-completion*.json;
 * - streaming answers replay a recorded SSE fixture (test/fixtures/*.sse) event by event;
 * - per test, `setBehavior` sets a status + error body, delays, other fixtures, a cut-off
 *   stream, or a `script` that answers the request itself (before the path check).
 *
 * Recording, delays and the SSE replay live in loopback-upstream.ts.
 */

export { FIXTURES_DIR, jsonFixture, readFixture, type RecordedRequest } from "./loopback-upstream.ts";

export interface UpstreamBehavior extends LoopbackBehavior {
  /** Non-streaming body; default: the tools fixture when the request has tools, else the plain one. */
  completion?: unknown;
  /** The model does not reason (gpt-4o, gpt-4.1): a `reasoning_effort` gets OpenAI's 400 for it. */
  refusesReasoning?: boolean;
}

/** OpenAI's 400 for a `reasoning_effort` sent to a model that does not reason. */
export const REASONING_EFFORT_REFUSAL = {
  error: { message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.", type: "invalid_request_error", param: "reasoning_effort", code: "unsupported_parameter" },
};

/** `url` is the base URL including /v1, as a channel's base_url, e.g. http://127.0.0.1:40123/v1 */
export type OpenAiUpstream = LoopbackUpstream<RecordedRequest, UpstreamBehavior>;

/** The events of an SSE fixture, as the `data` strings, split on blank lines. */
export function fixtureEvents(name: string): string[] {
  return sseFixtureEvents(name).map((event) => event.data);
}

export interface FixtureSummary {
  text: string;
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  endsWithDone: boolean;
}

/** What a stream fixture says, computed from the file alone (independent of the gateway's code). */
export function summarizeStreamFixture(name: string): FixtureSummary {
  const events = fixtureEvents(name);
  const summary: FixtureSummary = { text: "", finishReason: null, usage: null, toolCalls: [], endsWithDone: events.at(-1) === "[DONE]" };
  for (const data of events) {
    if (data === "[DONE]") continue;
    const chunk = JSON.parse(data);
    if (chunk.usage) summary.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) summary.text += choice.delta.content;
      for (const call of choice.delta?.tool_calls ?? []) {
        const slot = (summary.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) summary.finishReason = choice.finish_reason;
    }
  }
  return summary;
}

/** OpenAI's own error bodies for the usual statuses. */
export function openAiErrorBody(status: number): unknown {
  switch (status) {
    case 400:
      return { error: { message: "Invalid value for 'messages': upstream rejected the request.", type: "invalid_request_error", param: "messages", code: null } };
    case 401:
      return { error: { message: "Incorrect API key provided: upstr***cret. You can find your API key at https://platform.openai.com/account/api-keys.", type: "invalid_request_error", param: null, code: "invalid_api_key" } };
    case 429:
      return { error: { message: "Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): Limit 3, Used 3, Requested 1.", type: "requests", param: null, code: "rate_limit_exceeded" } };
    default:
      return { error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null } };
  }
}

/**
 * The tool-call pairing OpenAI enforces: an assistant message with tool_calls is followed at
 * once by a tool message for each call, and a tool message answers a call of the assistant
 * message before the run of tool messages it is in. OpenAI's message for the first violation.
 */
export function toolCallPairingError(messages: any[]): string | null {
  for (const [i, message] of messages.entries()) {
    if (message?.role === "tool") {
      let j = i - 1;
      while (j >= 0 && messages[j]?.role === "tool") j--;
      const calls: any[] = messages[j]?.role === "assistant" ? (messages[j].tool_calls ?? []) : [];
      if (!calls.some((call) => call?.id === message.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    const calls: any[] = message?.role === "assistant" ? (message.tool_calls ?? []) : [];
    if (calls.length === 0) continue;
    const answered = new Set<string>();
    for (let k = i + 1; k < messages.length && messages[k]?.role === "tool"; k++) answered.add(messages[k].tool_call_id);
    const missing = calls.filter((call) => !answered.has(call?.id)).map((call) => call?.id);
    if (missing.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`;
    }
  }
  return null;
}

/** OpenAI's message for the first object of a strict schema that is open or has a property not required, or null. */
function strictSchemaError(schema: unknown, what: string): string | null {
  return firstSchemaError(schema, (node) => {
    if (!isObjectSchema(node)) return null;
    if (node.additionalProperties !== false) return `Invalid schema for ${what}: In context=(), 'additionalProperties' is required to be supplied and to be false.`;
    const required: unknown[] = Array.isArray(node.required) ? node.required : [];
    const missing = Object.keys(node.properties ?? {}).find((key) => !required.includes(key));
    return missing === undefined ? null : `Invalid schema for ${what}: In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
  });
}

/** The 400 OpenAI answers a strict schema it cannot hold the answer to, or null. */
function strictSchemasError(body: any): string | null {
  const format = body?.response_format;
  if (format?.type === "json_schema" && format.json_schema?.strict === true) {
    const error = strictSchemaError(format.json_schema.schema, `response_format '${format.json_schema.name}'`);
    if (error) return error;
  }
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) {
    if (tool?.function?.strict !== true) continue;
    const error = strictSchemaError(tool.function.parameters, `function '${tool.function.name}'`);
    if (error) return error;
  }
  return null;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Starts a loopback OpenAI-compatible upstream. */
export async function startOpenAiUpstream(initial: Partial<UpstreamBehavior> = {}): Promise<OpenAiUpstream> {
  return startLoopbackUpstream<RecordedRequest, UpstreamBehavior>({
    initial,
    basePath: "/v1",
    answer(request, current) {
      if (current.script) return current.script(request);
      const { method, path, body } = request;
      if (method !== "POST" || path !== "/v1/chat/completions") {
        return Response.json({ error: { message: `Invalid URL (${method} ${path})`, type: "invalid_request_error", param: null, code: null } }, { status: 404 });
      }
      const unpaired = Array.isArray(body?.messages) ? toolCallPairingError(body.messages) : null;
      if (unpaired) return Response.json({ error: { message: unpaired, type: "invalid_request_error", param: "messages", code: null } }, { status: 400 });
      const unfit = strictSchemasError(body);
      if (unfit) return Response.json({ error: { message: unfit, type: "invalid_request_error", param: null, code: "invalid_json_schema" } }, { status: 400 });
      if (current.refusesReasoning && body?.reasoning_effort !== undefined) return Response.json(REASONING_EFFORT_REFUSAL, { status: 400 });
      if (isErrorStatus(current.status)) {
        return Response.json(current.errorBody ?? openAiErrorBody(current.status), { status: current.status, headers: current.headers });
      }
      const wantsTools = Array.isArray(body?.tools) && body.tools.length > 0;
      if (body?.stream === true) {
        return replaySse(current.streamFixture ?? (wantsTools ? "openai-chat-tool-stream.sse" : "openai-chat-stream.sse"), current, SSE_HEADERS);
      }
      const completion = current.completion ?? jsonFixture(wantsTools ? "openai-chat-completion-tools.json" : "openai-chat-completion.json");
      return Response.json(completion, { status: current.status, headers: current.headers });
    },
  });
}

/** A loopback base URL nothing listens on (a server was bound to the port, then closed). */
export async function closedPortUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = server.port;
  await server.stop(true);
  return `http://127.0.0.1:${port}/v1`;
}
