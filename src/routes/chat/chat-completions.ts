import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ChatCompletionRequestSchema } from "../../translate/openai-chat/request-schema.ts";
import { convertOpenAiChatRequestToCanonical } from "../../translate/openai-chat/convert-request-to-canonical.ts";
import { convertCanonicalToOpenAiChatResponse } from "../../translate/openai-chat/convert-response.ts";
import { partsToOpenAiChunks } from "../../translate/openai-chat/convert-stream.ts";
import { RequestMeter } from "../../usage/request-meter.ts";
import { applyVariantDefaults } from "./apply-variant-defaults.ts";
import { assertModelUsable } from "../resolve-model.ts";
import { servedHeaders, SSE_HEADERS } from "../response-headers.ts";

/** POST /v1/chat/completions (spec 4.1), plain and streamed. */
export function chatCompletionsRoutes(services: Services) {
  const auth = { keys: services.keys, lastUsed: services.lastUsed, now: services.now };
  return new Hono<AppEnv>().post("/v1/chat/completions", requireApiKey(auth, "chat"), async (c) => {
    const body = parseOrThrow(ChatCompletionRequestSchema, await readJsonBody(c.req.raw));
    const principal = c.get("principal");
    assertModelUsable(services, principal, body.model, "chat");
    const request = applyVariantDefaults(convertOpenAiChatRequestToCanonical(body), services.config.variant);
    const meter = new RequestMeter(
      services.usage,
      {
        requestId: c.get("requestId"),
        userId: principal.userId,
        tokenId: principal.tokenId,
        model: body.model,
        endpoint: "/v1/chat/completions",
        stream: request.stream,
        startedAt: services.now(),
      },
      services.now,
    );
    const signal = c.req.raw.signal;
    if (!request.stream) {
      const served = await services.chat.complete(request, meter, signal);
      return c.json(convertCanonicalToOpenAiChatResponse(served.value, body.model), 200, servedHeaders(served));
    }
    const served = await services.chat.stream(request, meter, signal);
    const sse = served.value
      .pipeThrough(
        partsToOpenAiChunks({
          model: body.model,
          includeUsage: body.stream_options?.include_usage === true,
          fallbackId: c.get("requestId"),
          now: services.now,
        }),
      )
      .pipeThrough(new TextEncoderStream());
    return new Response(sse, { status: 200, headers: { ...SSE_HEADERS, ...servedHeaders(served), "x-request-id": c.get("requestId") } });
  });
}
