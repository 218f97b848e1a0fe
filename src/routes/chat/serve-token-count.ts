import type { Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { ChatRequest } from "../../canonical/chat.ts";
import type { Services } from "../../services.ts";
import { admitUnbilledRequest } from "../admit-request.ts";
import { modelJsonResponse } from "../response-headers.ts";
import type { AnthropicNames } from "../../limits/rate-limiter.ts";

/**
 * The shared path of the token-counting endpoints once their body is in canonical form: the
 * model and rate checks of a request that costs nothing, the count through the model's
 * channels with failover, and `render` of the count in the caller's format (or the upstream's
 * own answer, when it speaks that format, so its details pass through), with the rate-limit
 * headers also by Anthropic's names when `anthropicNames`. No usage row and no ledger row:
 * providers do not charge for counting.
 */
export async function serveTokenCount(
  c: Context<AppEnv>,
  services: Services,
  request: ChatRequest,
  render: (inputTokens: number) => unknown,
  { anthropicNames = false }: { anthropicNames?: AnthropicNames } = {},
): Promise<Response> {
  const rateLimitHeaders = admitUnbilledRequest(c, services, request.model, anthropicNames);
  const served = await services.chat.countTokens(request, c.req.raw.signal);
  const { inputTokens, native } = served.value;
  return modelJsonResponse(native ?? render(inputTokens), { rateLimitHeaders, served, requestId: c.get("requestId") });
}
