import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Services } from "../services.ts";
import type { ModelMode } from "../pricing/price.ts";
import { computeHold, type BillableUsage } from "../billing/compute-cost.ts";
import { holdFunds, priceOrRefuse } from "../billing/hold-funds.ts";
import { limitsFor, type AnthropicNames, type RateGrant } from "../limits/rate-limiter.ts";
import type { Principal } from "../auth/key-cache.ts";
import { RequestMeter } from "../usage/request-meter.ts";
import { assertModelUsable } from "./resolve-model.ts";

/** What a request of any endpoint may use at most: the basis of its hold and token reservation. */
export interface RequestAdmission {
  model: string;
  mode: ModelMode;
  stream: boolean;
  maxUsage: BillableUsage;
  /** Whether the rate-limit headers also go by Anthropic's names (a messages-format caller). */
  anthropicNames?: AnthropicNames;
}

/** An admitted request: its meter (usage row and settlement) and its rate-limit headers. */
export interface Admitted {
  meter: RequestMeter;
  rateLimitHeaders: Record<string, string>;
}

/**
 * The checks every model endpoint runs before an upstream is called, in this order: the model
 * exists for this key and serves this endpoint (404/400), it has a price (400), the database
 * takes writes, so the request can be billed (503), the key's rate limits admit it (429), and
 * its maximum cost is held (402). Each refusal leaves nothing behind.
 */
export async function admitRequest(c: Context<AppEnv>, services: Services, admission: RequestAdmission): Promise<Admitted> {
  const principal = c.get("principal");
  assertModelUsable(services, principal, admission.model, admission.mode);
  const price = priceOrRefuse(services, admission.model);
  services.writable.assertOpen();
  const { maxUsage } = admission;
  const grant = admitRate(services, principal, maxUsage.inputTokens + maxUsage.outputTokens, admission.anthropicNames);
  const meter = new RequestMeter(
    services.usage,
    {
      requestId: c.get("requestId"),
      userId: principal.userId,
      tokenId: principal.tokenId,
      model: admission.model,
      endpoint: c.req.path,
      stream: admission.stream,
      startedAt: services.now(),
    },
    services.now,
    price,
  );
  meter.onTokensUsed = grant.settle;
  await holdFunds(services, meter, computeHold(price, maxUsage));
  return { meter, rateLimitHeaders: grant.headers };
}

/**
 * The checks of a chat request that costs nothing (token counting): the model exists for this
 * key and serves chat (404/400), and the key's rate limits admit one more request (429). It
 * reserves no tokens, needs no price and holds no funds. Returns the rate-limit headers.
 */
export function admitUnbilledRequest(c: Context<AppEnv>, services: Services, model: string, anthropicNames: AnthropicNames = false): Record<string, string> {
  const principal = c.get("principal");
  assertModelUsable(services, principal, model, "chat");
  const grant = admitRate(services, principal, 0, anthropicNames);
  // Nothing reserved, nothing to settle later: settled now, so the bucket can be let go.
  grant.settle(0);
  return grant.headers;
}

/**
 * A 429 now, taking nothing, when the key's request limit would refuse the request anyway:
 * for an endpoint that must read an upload before admitRequest can be called.
 */
export function refuseIfRateLimited(c: Context<AppEnv>, services: Services): void {
  const principal = c.get("principal");
  services.rateLimiter.refuseIfExhausted(principal, limitsFor(principal, services.settings.current));
}

/** One request of `tokens` against the key's limits, or a 429. */
function admitRate(services: Services, principal: Principal, tokens: number, anthropicNames: AnthropicNames = false): RateGrant {
  return services.rateLimiter.admit(principal, limitsFor(principal, services.settings.current), tokens, anthropicNames);
}
