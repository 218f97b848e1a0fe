import { partsWithRefusal, type AnswerPart, type ChatRequest, type ChatResponse, type PromptUsage, type SignedThinking, type StreamFailure, type StreamPart, type Usage } from "../canonical/chat.ts";
import { firstToolCallId } from "../canonical/answered-tool-calls.ts";
import type { KeptThinking } from "../state/kept-thinking.ts";
import { keepThinking, withKeptThinking } from "./carry-thinking.ts";
import { tokensOfLength } from "../lib/estimate-tokens.ts";
import { estimatePromptTokens } from "../canonical/estimate-prompt-tokens.ts";
import { tapBatches } from "../streams/tap-stream.ts";
import { endingWith } from "../streams/batch-source.ts";
import { UnrecordedEnding } from "../streams/unrecorded-ending.ts";
import { CHAT_ADAPTERS } from "../upstreams/chat-adapters.ts";
import type { ChatAdapter, ChatStream, TokenCount, UpstreamCall } from "../upstreams/adapter.ts";
import type { Served } from "./with-failover.ts";
import { serveThroughChannels, statusOf, type ServedCall, type UpstreamDeps } from "./serve-through-channels.ts";
import type { RequestMeter } from "../usage/request-meter.ts";
import { superviseUpstream } from "../streams/supervise-upstream.ts";
import { holdUntilAnswer } from "../streams/hold-until-answer.ts";
import type { Channel } from "../channels/channel.ts";
import { needsCallerFormat, speaksCallerFormat, untranslatableError, warnLeftOut } from "../translate/untranslated.ts";
import { ReasoningRefusals, sendMindingRefusedReasoning } from "./refused-reasoning.ts";
import { streamEndStatus } from "../translate/stream-failure-status.ts";

/**
 * How long a stream is held for the first part of its answer, during which a failure still
 * moves on to the next channel. The caller's keep-alive comments begin after 1 s as well, so
 * a model that thinks for long gets its response head about as soon as before.
 */
const ANSWER_WAIT_MS = 1_000;

/**
 * A stream's usage when the upstream reported none: the prompt as the upstream counted it up
 * front, else estimated, what was streamed at about 4 characters a token, and the searches it
 * began. (A broken stream that gave the caller nothing of an answer and ran no search costs
 * nothing, and does not come here.)
 */
function unreportedUsage(request: ChatRequest, prompt: PromptUsage | undefined, streamedLength: number, webSearches = 0): Usage {
  const usage: Usage = { ...(prompt ?? { inputTokens: estimatePromptTokens(request) }), outputTokens: tokensOfLength(streamedLength) };
  return webSearches > 0 ? { ...usage, webSearches } : usage;
}

/** Serves canonical chat requests through the channels of their model, with failover. */
export class ChatDispatcher {
  /** The upstream models that refused a translated reasoning setting lately. */
  readonly #reasoningRefusals: ReasoningRefusals;

  constructor(
    private readonly deps: UpstreamDeps,
    /** Anthropic's thinking of answers that called tools, for the turns that answer them. */
    private readonly keptThinking: KeptThinking,
  ) {
    this.#reasoningRefusals = new ReasoningRefusals(deps.now);
  }

  /**
   * A whole response; the usage row is committed before this resolves. A client that leaves
   * once the upstream's answer has begun is charged for it (a 499 row): see serveThroughChannels.
   * `answered` is given the response, its usage filled in, just before its usage row is queued:
   * what it queues for the write turn (a Response kept) shares the row's transaction, one
   * commit for both.
   */
  async complete(asked: ChatRequest, meter: RequestMeter, signal: AbortSignal, answered?: (response: ChatResponse) => void): Promise<Served<ChatResponse>> {
    const owner = meter.facts.userId;
    const request = withKeptThinking(asked, this.keptThinking, owner, this.deps.channels);
    let served: ServedCall<ChatResponse>;
    try {
      served = await this.#serve(request, signal, (adapter, sent, call) => adapter.complete(sent, call), true);
    } catch (error) {
      await meter.finish({ status: statusOf(error), usage: null, channelId: null });
      throw error;
    }
    served.release();
    // Without reported usage the estimate is billed, and shown to the caller as the usage
    // (a native passthrough body is shown as the upstream sent it).
    const value = { ...served.value, usage: served.value.usage ?? estimateUsage(request, served.value) };
    // Queued before the usage row, so the two share its commit.
    const keeping = keepThinking(this.keptThinking, request, owner, firstToolCallId(value.content), value.signedThinking);
    try {
      answered?.(value);
    } finally {
      // The upstream answered, so it is billed even if what the caller was to be told of it failed.
      await meter.finish({ status: signal.aborted ? 499 : 200, usage: value.usage, channelId: served.channel.id });
      await keeping;
    }
    return { ...served, value };
  }

  /**
   * A stream of parts (canonical, and native ones for a same-format caller). Its usage row is written exactly once: when it completes
   * (before its end reaches the client), fails, or the client cancels it.
   */
  async stream(asked: ChatRequest, meter: RequestMeter, signal: AbortSignal): Promise<Served<ChatStream>> {
    const owner = meter.facts.userId;
    const request = withKeptThinking(asked, this.keptThinking, owner, this.deps.channels);
    let served: ServedCall<ChatStream>;
    try {
      served = await this.#serve(request, signal, async (adapter, sent, call) => {
        const stream = await adapter.stream(sent, call);
        return { ...stream, parts: await holdUntilAnswer(superviseUpstream(stream.parts, call.idleTimeoutMs, call.channel.apiKey), ANSWER_WAIT_MS) };
      });
    } catch (error) {
      await meter.finish({ status: statusOf(error), usage: null, channelId: null });
      throw error;
    }
    let reported: Usage | null = null;
    let estimated: Usage | null = null;
    let prompt: PromptUsage | undefined;
    // Counted, not kept: the estimate needs only its length, and an upstream may stream for as long as its deadline allows.
    let streamedLength = 0;
    // Searches the upstream ran, which Anthropic bills whether or not the answer ends.
    let webSearches = 0;
    let failure: StreamFailure | undefined;
    // Anthropic's thinking blocks and the first tool call, to keep for the turn that answers the calls.
    const signedThinking: SignedThinking[] = [];
    let firstCallId: string | undefined;
    const ending = new UnrecordedEnding();
    const parts = tapBatches(served.value.parts, {
      deadline: { signal: served.deadline, client: signal },
      onItem(part) {
        if (part.type === "usage") reported = part.usage;
        else if (part.type === "text-delta" || part.type === "refusal-delta" || part.type === "reasoning-delta") streamedLength += part.text.length;
        else if (part.type === "tool-call-delta") streamedLength += part.argumentsDelta.length;
        else if (part.type === "error") failure = part;
        else if (part.type === "start") prompt = part.prompt;
        else if (part.type === "web-search") webSearches++;
        else if (part.type === "signed-thinking") signedThinking.push(part.block);
        else if (part.type === "tool-call-start") firstCallId ??= part.id;
      },
      onEnd: (end) => {
        served.release();
        // A stream the upstream broke is its failure, with the status of its error event, even
        // when the client hung up after that event; one cut at the deadline for a client that
        // stopped reading is recorded as the gateway's 502, charged for what the upstream produced.
        const broken = failure !== undefined || end === "failed" || end === "stalled";
        if (!reported && !(broken && streamedLength === 0 && webSearches === 0)) estimated = unreportedUsage(request, prompt, streamedLength, webSearches);
        const endedWell = end === "complete" && !failure;
        // Queued before the usage row, so the two share its commit, which the stream's end waits for.
        const keeping = endedWell ? keepThinking(this.keptThinking, request, owner, firstCallId, signedThinking) : undefined;
        const finishing = meter.finish({ status: streamEndStatus(end, failure), usage: reported ?? estimated, channelId: served.channel.id });
        return ending.noting(keeping ? Promise.all([finishing, keeping]).then(() => {}) : finishing, endedWell);
      },
    });
    // The estimate billed for a stream the upstream reported no usage of ends it, so the caller reads what it paid for.
    const billed = endingWith(ending.around(parts), (): StreamPart[] => (estimated && !failure && !ending.unrecorded ? [{ type: "usage", usage: estimated }] : []));
    return { ...served, value: { parts: billed, native: served.value.native } };
  }

  /**
   * The input tokens of the request's prompt, counted by the first channel that answers. Only
   * the prompt goes: sampling, output format, end user and streaming are not part of it, and
   * Anthropic's count endpoint refuses them. Nothing is metered: providers do not charge for
   * counting.
   */
  async countTokens(request: ChatRequest, signal: AbortSignal): Promise<Served<TokenCount>> {
    const prompt: ChatRequest = { ...request, params: {}, responseFormat: undefined, reasoning: undefined, endUser: undefined, stream: false };
    const served = await this.#serve(prompt, signal, (adapter, sent, call) => adapter.countTokens(sent, call));
    served.release();
    return served;
  }

  /**
   * Runs the request on the model's chat channels. Content only the caller's format carries
   * keeps it to channels of that format (400 when the model has none); other channels are
   * told, in the warnings, what replayed content they are sent without, and are sent no
   * reasoning setting their model refuses (see sendMindingRefusedReasoning). `run` sends the
   * request as given it.
   */
  #serve<T>(
    request: ChatRequest,
    signal: AbortSignal,
    run: (adapter: ChatAdapter, request: ChatRequest, call: UpstreamCall) => Promise<T>,
    readWhole = false,
  ): Promise<ServedCall<T>> {
    const callerFormatOnly = needsCallerFormat(request);
    const canServe = (channel: Channel) => {
      const adapter = CHAT_ADAPTERS[channel.type];
      return adapter !== undefined && (!callerFormatOnly || speaksCallerFormat(request, adapter));
    };
    if (callerFormatOnly) {
      const candidates = this.deps.channels.candidatesFor(request.model);
      if (candidates.some((channel) => CHAT_ADAPTERS[channel.type]) && !candidates.some(canServe)) throw untranslatableError(request);
    }
    return serveThroughChannels(this.deps, request.model, canServe, signal, (channel, call) => {
      const adapter = CHAT_ADAPTERS[channel.type]!;
      if (speaksCallerFormat(request, adapter)) return run(adapter, request, call);
      warnLeftOut(request, call.warnings);
      return sendMindingRefusedReasoning(request, adapter, call, this.#reasoningRefusals, run);
    }, readWhole ? "whole" : "stream");
  }
}

/** The usage of a response whose upstream reported none: its prompt and every answer it gave, at about 4 characters a token. */
function estimateUsage(request: ChatRequest, response: ChatResponse): Usage {
  let length = outputLength(partsWithRefusal(response));
  if (response.otherAnswers) for (const answer of response.otherAnswers) length += outputLength(answer);
  return { inputTokens: estimatePromptTokens(request), outputTokens: tokensOfLength(length) };
}

/** The characters an answer wrote: its reasoning, its text and its tool calls' arguments. */
function outputLength(parts: readonly AnswerPart[]): number {
  let length = 0;
  for (const part of parts) length += part.type === "text" || part.type === "reasoning" ? part.text.length : part.type === "tool_call" ? part.arguments.length : 0;
  return length;
}
