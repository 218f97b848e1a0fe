import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { requireApiKey } from "../auth/authenticate.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { microsToUsd } from "../lib/money.ts";
import { isoOf } from "../lib/time.ts";
import type { Services } from "../services.ts";

/** GET /v1/balance (spec 4.5, Variant A only): the calling key's account. */
export function balanceRoutes(services: Services) {
  const auth = requireApiKey(services);
  return new Hono<AppEnv>().get("/v1/balance", auth, async (c) => {
    const user = await services.db
      .selectFrom("users")
      .select(["balance_micros", "total_spent_micros", "updated_at"])
      .where("id", "=", c.get("principal").userId)
      .executeTakeFirst();
    if (!user) throw new GatewayError(404, "Account not found");
    return c.json({
      balance: microsToUsd(user.balance_micros),
      currency: services.settings.current.features.default_currency,
      total_spent: microsToUsd(user.total_spent_micros),
      last_updated: isoOf(user.updated_at),
    });
  });
}
