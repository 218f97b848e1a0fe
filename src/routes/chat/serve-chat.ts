import type { Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { ChatRequest, ChatResponse, StreamPart } from "../../canonical/chat.ts";
import type { Services } from "../../services.ts";
import { modelJsonResponse, modelResponse, SSE_HEADERS } from "../response-headers.ts";
import { estimateMaxUsage } from "../../billing/estimate-hold.ts";
import { admitRequest } from "../admit-request.ts";

/** How one caller format renders the canonical outcome. */
export interface ChatFormat {
  /** The whole response body for a non-streaming request. */
  renderResponse(response: ChatResponse, model: string): unknown;
  /** Canonical parts -> this format's SSE text, its own error event included. */
  renderStream(model: string, requestId: string): TransformStream<StreamPart, string>;
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
  const { meter, rateLimitHeaders } = await admitRequest(c, services, {
    model: request.model,
    mode: "chat",
    stream: request.stream,
    maxUsage: estimateMaxUsage(request),
  });
  const requestId = c.get("requestId");
  const signal = c.req.raw.signal;
  if (!request.stream) {
    const served = await services.chat.complete(request, meter, signal);
    return modelJsonResponse(format.renderResponse(served.value, request.model), { rateLimitHeaders, served, requestId });
  }
  const served = await services.chat.stream(request, meter, signal);
  const body = served.value.pipeThrough(format.renderStream(request.model, requestId)).pipeThrough(new TextEncoderStream());
  return modelResponse(body, SSE_HEADERS, { rateLimitHeaders, served, requestId });
}
