/**
 * The one canonical form of a chat exchange. Every caller format translates into it and
 * every upstream adapter translates out of it, so N formats and M upstreams need N + M
 * translators, not N x M.
 */

import type { SseEvent } from "../streams/sse.ts";

export type ContentPart =
  | { type: "text"; text: string }
  /** `url` is an http(s) URL or a `data:` URL carrying the bytes. */
  | { type: "image"; url: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_result"; toolCallId: string; content: string; isError?: boolean };

/**
 * The model's thinking before its answer, as far as the upstream shows it: Anthropic's
 * thinking blocks, Gemini's thought summaries, the `reasoning_content` of OpenAI-compatible
 * servers. Only answers have it: a caller's record of earlier thinking is replay (Untranslated).
 */
export type ReasoningPart = { type: "reasoning"; text: string };

/**
 * A thinking block of Anthropic's, as its upstream made it: signed, or encrypted whole. No
 * other format has a place for it, but Anthropic wants it back verbatim, first in its turn,
 * when that turn's tool calls are answered while the model thinks; the gateway keeps it for
 * callers of other formats (src/state/kept-thinking.ts).
 */
export type SignedThinking = { type: "thinking"; thinking: string; signature: string } | { type: "redacted_thinking"; data: string };

/** A part of an answer: content, or the thinking that came before it. */
export type AnswerPart = ContentPart | ReasoningPart;

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  parts: ContentPart[];
  /**
   * An assistant turn's Anthropic thinking, as kept when the turn was answered to a caller of
   * another format: set by the dispatcher, never by a caller's translation.
   */
  signedThinking?: SignedThinking[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /**
   * The arguments are to be held to `parameters` by the provider (OpenAI's function `strict`,
   * Anthropic's tool `strict`: constrained decoding), not merely asked for. Set only when true.
   */
  strict?: boolean;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

/**
 * A shape the answer's text must take: JSON of whatever shape, or JSON matching a schema. `strict`: the
 * answer is to be held to the schema, not merely asked for (OpenAI's `strict`; Anthropic's
 * structured outputs always are).
 */
export type ResponseFormat = { type: "json" } | { type: "json_schema"; schema: Record<string, unknown>; name?: string; strict?: boolean };

export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  stop?: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
}

/**
 * How hard the model is to think, on the scale every format maps to: OpenAI's
 * reasoning_effort, Anthropic's effort, Gemini's thinkingLevel. `none`: not at all.
 */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/**
 * What the caller asked of the model's thinking. `budgetTokens` comes from a format that
 * counts it (Anthropic's budget_tokens, Gemini's thinkingBudget) and goes to an upstream that
 * takes a count; another gets the effort it stands for. Neither set: thinking on, its amount
 * the model's own choice (Anthropic's adaptive thinking without an effort, Gemini's budget -1).
 */
export interface ReasoningRequest {
  effort?: ReasoningEffort;
  budgetTokens?: number;
}

/** The wire formats the gateway speaks on both sides. */
export type WireFormat = "openai" | "anthropic" | "gemini";

/**
 * Caller content the canonical form does not carry (thinking blocks, documents, audio, server
 * tools...). An upstream of the caller's format receives it in the native body. For any other
 * upstream, `replay` items (a provider's record of its own earlier output, meaningless to
 * another) are left out with a warning, and `input` items, whose loss would change what the
 * model is asked, refuse the request. Each item says where it was and what it is, e.g.
 * `messages[1].content[0] (thinking)`.
 */
export interface Untranslated {
  replay: string[];
  input: string[];
  /**
   * Settings that only the caller's format takes, within the messages (an image's `detail`)
   * or beside a field carried (a second end-user id): named for another format, as its
   * top-level fields are.
   */
  fields: string[];
  /** Where the request ends in a prefill (Anthropic's final assistant message, which the answer continues). */
  prefill?: string;
}

/** The caller's own request, for an upstream that speaks its format. */
export interface NativeRequest {
  format: WireFormat;
  /** Sent as it is (model remapped), so fields the gateway does not know survive. */
  body: Record<string, unknown>;
  untranslated?: Untranslated;
  /** Caller headers that a same-format upstream should see too (Anthropic's `anthropic-beta`). */
  headers?: Record<string, string>;
  /**
   * How many answers the body asks for (OpenAI's `n`, Gemini's `candidateCount`), set only
   * when more than one: the canonical form carries one answer, so only an upstream of the
   * caller's format can give them, and the hold and token reservation count each.
   */
  answers?: number;
  /**
   * Set when the body offers a web search tool the upstream runs itself (Anthropic's
   * web_search), whose every search is billed: `maxUses` when each such tool names its
   * max_uses (their sum), the most searches the request may make.
   */
  webSearch?: { maxUses?: number };
}

export interface ChatRequest {
  /** The public model ID the caller asked for. */
  model: string;
  native?: NativeRequest;
  messages: ChatMessage[];
  params: SamplingParams;
  /**
   * The params the gateway filled in (spec 4.1's Variant defaults) rather than the caller: an
   * upstream model that refuses such a value is not sent it, since the caller never asked.
   */
  defaulted?: readonly (keyof SamplingParams)[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** False when the caller wants at most one tool call per turn. */
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningRequest;
  /**
   * Whether the caller's answer shows the model's thinking (reasoning parts): what its format
   * does when asked (Anthropic's thinking on, Gemini's includeThoughts); OpenAI chat callers
   * always get it, in `reasoning_content`, as OpenAI-compatible servers send it.
   */
  showReasoning: boolean;
  /**
   * The caller's id for its end user, by which a provider tells an abusive user from the
   * application serving them; `field` is where the caller put it, for a warning.
   */
  endUser?: { id: string; field: string };
  stream: boolean;
  /**
   * What the caller asked for that no upstream of any kind receives, as `field: why` (a
   * Responses caller's `store`, `reasoning`...), for the caller's warnings. Only a caller
   * format no upstream speaks has such fields: the others' such fields reach a same-format upstream.
   */
  unhonoured?: string[];
  /**
   * A Responses caller's own conversation, which no native body holds (no upstream speaks that
   * format): read only to name one of its items in a warning (see callerPlaceOfSystemMessage).
   */
  responsesConversation?: ResponsesConversation;
}

/** An item of a Responses conversation, as far as a warning tells a system instruction from the rest (by its role). */
export interface ConversationItem {
  readonly type?: string;
  readonly role?: string;
}

/**
 * A Responses caller's conversation as it came: whether `instructions` opened it (as a system
 * message), the items of the Responses it continues by `previous_response_id`, then its `input`.
 */
export interface ResponsesConversation {
  readonly instructions: boolean;
  readonly earlier: readonly ConversationItem[];
  readonly input: readonly ConversationItem[];
}

/**
 * Why an answer ended. `refusal`: the model declined (OpenAI's `refusal`, Anthropic's
 * stop_reason "refusal"); `content_filter`: a provider's filter withheld output (OpenAI's
 * content_filter, Gemini's SAFETY and its kin).
 */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "refusal" | "error";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the upstream's prompt cache, when it reports them. */
  cachedInputTokens?: number;
  /**
   * Input tokens written to the upstream's prompt cache, by the entry's lifetime (Anthropic's
   * cache_creation), when it reports them: priced at the cache-write prices, which a provider
   * may set above its input price. Counted in inputTokens too, as cached ones are.
   */
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  /**
   * Of outputTokens, those the model spent thinking, when the upstream counts them apart
   * (OpenAI's reasoning_tokens, Gemini's thoughtsTokenCount; Anthropic does not).
   */
  reasoningTokens?: number;
  /** Searches the upstream's own web search tool ran (Anthropic's server_tool_use.web_search_requests), billed apiece. */
  webSearches?: number;
}

/** The counts of a usage, besides inputTokens, that describe its prompt. */
const PROMPT_COUNTS = ["cachedInputTokens", "cacheWrite5mTokens", "cacheWrite1hTokens"] as const;

/** The prompt's half of a usage. */
export type PromptUsage = Pick<Usage, "inputTokens" | (typeof PROMPT_COUNTS)[number]>;

/** The prompt's half of `usage`, without its output counts. */
export function promptOf(usage: Usage): PromptUsage {
  const prompt: PromptUsage = { inputTokens: usage.inputTokens };
  for (const count of PROMPT_COUNTS) if (usage[count] !== undefined) prompt[count] = usage[count];
  return prompt;
}

export interface ChatResponse {
  id: string;
  model: string;
  created: number;
  /** Reasoning, text and tool-call parts, in order. */
  content: AnswerPart[];
  finishReason: FinishReason;
  /**
   * With finishReason "refusal", the model's words for why it declined, when it gave some
   * (OpenAI's `refusal`, Anthropic's `stop_details.explanation`); not part of `content`.
   */
  refusal?: string;
  /** The stop sequence that ended the answer (finishReason "stop"), when the upstream says which. */
  stopSequence?: string;
  /**
   * The answers after the first, when the upstream gave several (OpenAI's n, Gemini's
   * candidateCount): their caller, of the upstream's format, reads them in `native`; here they
   * are counted in the estimate of an upstream that reports no usage. A refusal's words are text.
   */
  otherAnswers?: AnswerPart[][];
  usage: Usage | null;
  /** The upstream's own body, given only when the caller speaks the upstream's format (native passthrough). */
  native?: Record<string, unknown>;
  /**
   * The answer's Anthropic thinking blocks, in order, when it called tools (the turn answering
   * them wants the blocks back), its upstream is Anthropic and every block came signed.
   */
  signedThinking?: SignedThinking[];
}

/** One event of a streamed response, in order: start, deltas, then usage and finish. */
export type StreamPart =
  /**
   * An upstream event in the caller's own format (native passthrough), given before the
   * parts decoded from it: a relay sends it on as it came, a translating renderer ignores it.
   * `body` is the event's parsed JSON, untouched.
   */
  | { type: "native"; event: SseEvent; body: Record<string, unknown> }
  /**
   * `prompt` when the upstream counts the prompt as the answer begins (Anthropic's
   * message_start, Gemini's usageMetadata on each chunk): a stream that ends before its usage
   * (the client left, the upstream broke off) is billed that count, not the prompt's estimate.
   */
  | { type: "start"; id: string; model: string; created: number; prompt?: PromptUsage }
  | { type: "text-delta"; text: string }
  /** A piece of the model's thinking (ReasoningPart), streamed. */
  | { type: "reasoning-delta"; text: string }
  /** An Anthropic thinking block, whole, given at the answer's end with the others, all or none (ChatResponse.signedThinking); no caller is shown it. */
  | { type: "signed-thinking"; block: SignedThinking }
  /** A piece of a refusal's words (ChatResponse.refusal), streamed. */
  | { type: "refusal-delta"; text: string }
  /** The first fragment of tool call `index`, with its id and name. */
  | { type: "tool-call-start"; index: number; id: string; name: string }
  | { type: "tool-call-delta"; index: number; argumentsDelta: string }
  | { type: "usage"; usage: Usage }
  /**
   * A search the upstream's own web search tool began (Anthropic's server_tool_use block),
   * billed apiece: counted for a stream that ends before its usage reports the searches.
   */
  | { type: "web-search" }
  /** `stopSequence` as in ChatResponse. */
  | { type: "finish"; finishReason: FinishReason; stopSequence?: string }
  /**
   * The upstream failed after the stream began; the caller's format renders its own error
   * event. `status`: the HTTP status the upstream's own error event stands for, when it named one;
   * `timedOut`: the upstream went silent past the idle limit (a 504 when that comes before the answer).
   */
  | StreamFailure;

/** A StreamPart of type `error`: see there. */
export interface StreamFailure {
  type: "error";
  message: string;
  status?: number;
  timedOut?: true;
  /** The model's answer is of no use to the caller (see UpstreamFailure's `unusable`). */
  unusable?: true;
}

/** An answer's parts with its refusal's words as text after them, for a format with no place of its own for a refusal. */
export function partsWithRefusal(response: ChatResponse): AnswerPart[] {
  return response.refusal ? [...response.content, { type: "text", text: response.refusal }] : response.content;
}

/** The text of a message's text parts, joined. */
export function textOf(parts: readonly AnswerPart[]): string {
  let text = "";
  for (const part of parts) if (part.type === "text") text += part.text;
  return text;
}
