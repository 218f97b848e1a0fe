import type { Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { ChatRequest, ChatResponse, StreamPart } from "../../canonical/chat.ts";
import type { Services } from "../../services.ts";
import { modelJsonResponse, modelResponse, SSE_HEADERS } from "../response-headers.ts";
import { estimateMaxUsage } from "../../billing/estimate-hold.ts";
import { admitRequest } from "../admit-request.ts";
import type { AnthropicNames } from "../../limits/rate-limiter.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { renderBatches, type StreamWire } from "../../streams/render-batches.ts";
import { withCallerModel, withEveryUsageCount, type UsageField } from "../../translate/relay-native.ts";
import { hidingReasoning, withoutReasoning } from "../../translate/reasoning.ts";

/**
 * While the upstream is alive but nothing it sends is the caller's to see (pings, hidden
 * reasoning), the caller gets an SSE comment after 1 s, so it has the response head, and then
 * every 10 s: well inside the 60 s read timeout common in reverse proxies.
 */
const KEEP_ALIVE = { firstAfterMs: 1_000, everyMs: 10_000 };

/** A translated answer: without the model's thinking when the caller did not ask to see it. */
function shown(response: ChatResponse, request: ChatRequest): ChatResponse {
  return request.showReasoning ? response : withoutReasoning(response);
}

/** A translated stream's renderer: without the model's thinking when the caller did not ask to see it. */
function translated(render: StreamStep<StreamPart, string>, request: ChatRequest): StreamStep<StreamPart, string> {
  return request.showReasoning ? render : hidingReasoning(render);
}

/** How one caller format renders the outcome: translated from canonical, or relayed from an upstream of the same format. */
export interface ChatFormat {
  /** The whole response body for a non-streaming request. */
  renderResponse(response: ChatResponse, model: string): unknown;
  /**
   * Canonical parts -> this format's SSE text, its own error event included. `estimatedPromptTokens`
   * is the gateway's count of the prompt, for a format that states it before the upstream has.
   */
  renderStream(model: string, requestId: string, estimatedPromptTokens: number): StreamStep<StreamPart, string>;
  /** An upstream of this same format, asked for `answers` answers: its native parts relayed as they came. */
  relayStream(model: string, answers: number): StreamStep<StreamPart, string>;
  /** The field where this format's responses name their model, which native passthrough rewrites. */
  modelField: string;
  /** Where this format's responses carry usage, which native passthrough fills when the upstream left it out. */
  usageField: UsageField;
  /** The stream's content type and keep-alive when an SSE comment would break it (a Gemini caller's). */
  streamWire?: StreamWire;
  /** Whether the rate-limit headers also go by Anthropic's names, for a messages-format caller. */
  anthropicNames?: AnthropicNames;
  /**
   * What the end of the response waits for, asked once it is rendered (the whole body, or a
   * stream's last events): the commit of the Response a Responses answer keeps, so a client
   * that has its answer and at once names it to another instance finds it there.
   */
  settled?(): Promise<void> | undefined;
}

/**
 * The shared path of every chat surface once its body is in canonical form: model checks,
 * usage metering, dispatch with failover, and rendering in the caller's format.
 */
export async function serveChat(
  c: Context<AppEnv>,
  services: Services,
  request: ChatRequest,
  format: ChatFormat,
): Promise<Response> {
  const maxUsage = estimateMaxUsage(request);
  const { meter, rateLimitHeaders } = await admitRequest(c, services, {
    model: request.model,
    mode: "chat",
    stream: request.stream,
    maxUsage,
    anthropicNames: format.anthropicNames,
  });
  const requestId = c.get("requestId");
  const signal = c.req.raw.signal;
  if (!request.stream) {
    let body: unknown;
    // Rendered before the usage row is queued, so a Response it keeps is committed with the row.
    const served = await services.chat.complete(request, meter, signal, (answer) => {
      body = answer.native
        ? withEveryUsageCount(withCallerModel(answer.native, request.model, format.modelField), format.usageField, answer.usage)
        : format.renderResponse(shown(answer, request), request.model);
    });
    const settling = format.settled?.();
    if (settling) await settling;
    return modelJsonResponse(body, { rateLimitHeaders, served, requestId });
  }
  const served = await services.chat.stream(request, meter, signal);
  const { parts, native } = served.value;
  const render = native ? format.relayStream(request.model, request.native?.answers ?? 1) : translated(format.renderStream(request.model, requestId, maxUsage.inputTokens), request);
  const wire = format.streamWire;
  // The dispatcher may have held the stream a while for the first part of its answer.
  const keepAlive = { ...KEEP_ALIVE, now: services.now, since: meter.facts.startedAt, text: wire?.keepAlive };
  const headers = wire?.contentType ? { ...SSE_HEADERS, "content-type": wire.contentType } : SSE_HEADERS;
  return modelResponse(renderBatches(parts, render, keepAlive, format.settled), headers, { rateLimitHeaders, served, requestId });
}
