import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { badRequest, GatewayError } from "../../errors/gateway-error.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { IdentifierSchema } from "../../lib/schemas.ts";
import { usdAmountSchema } from "../../admin/usd-schema.ts";
import { topUp } from "../../accounts/top-up.ts";
import { hashKey } from "../../auth/api-keys.ts";

/** POST /v1/admin/topup (spec 4.12), idempotent with an `Idempotency-Key` header. */
export function adminTopUpRoutes(services: Services) {
  const TopUpSchema = v.strictObject({
    user_id: IdentifierSchema,
    amount: usdAmountSchema({ allowZero: false, maxMicros: services.config.maxTopupMicros }),
    payment_method: v.optional(IdentifierSchema, "balance"),
  });

  return new Hono<AppEnv>().post("/topup", async (c) => {
    const body = parseOrThrow(TopUpSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
    const key = c.req.header("idempotency-key");
    if (key !== undefined && (key.length === 0 || key.length > 255)) throw badRequest("Idempotency-Key must be 1 to 255 characters");
    const fingerprint = key === undefined ? undefined : hashKey(JSON.stringify([body.user_id, body.amount, body.payment_method]));
    try {
      const result = await topUp(services.db, {
        userId: body.user_id,
        amountMicros: body.amount,
        paymentMethod: body.payment_method,
        idempotency: key === undefined ? undefined : { key, fingerprint: fingerprint! },
        now: services.now(),
      });
      return c.json(result);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      // Fails closed: the credit and its ledger row are one transaction, so nothing was applied.
      throw new GatewayError(503, "The database is unavailable; nothing was credited. Retry with the same Idempotency-Key.");
    }
  });
}
