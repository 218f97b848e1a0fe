import { GatewayError } from "../errors/gateway-error.ts";
import type { Price } from "../pricing/price.ts";
import type { Services } from "../services.ts";
import type { RequestMeter } from "../usage/request-meter.ts";

/** Whether requests for `model` are refused for want of a price: it has none, and the settings do not allow free models. */
export function refusedUnpriced(services: Services, model: string): boolean {
  return !services.prices.get(model) && !services.settings.current.allow_unpriced_models;
}

/** The model's price, or a 400 when it has none and the settings do not allow free models. */
export function priceOrRefuse(services: Services, model: string): Price | undefined {
  if (refusedUnpriced(services, model)) {
    throw new GatewayError(400, `The model '${model}' has no price configured; an operator must set one before it can be used`);
  }
  return services.prices.get(model);
}

/**
 * Holds the request's estimated maximum cost before any upstream call. When the balance
 * cannot cover it the request is refused with 402 (its usage row says so) and no upstream
 * is called. The hold is settled with the request's usage row.
 */
export async function holdFunds(services: Services, meter: RequestMeter, amountMicros: number): Promise<void> {
  if (amountMicros <= 0) return;
  const held = await services.holds.hold(meter.facts.userId, amountMicros, meter.facts.requestId, meter.facts.startedAt);
  if (held === null) {
    await meter.finish({ status: 402, usage: null, channelId: null });
    throw new GatewayError(402, "Insufficient balance for this request; top up the account to continue");
  }
  meter.hold = held;
}
