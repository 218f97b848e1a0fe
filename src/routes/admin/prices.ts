import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { usdAmountSchema } from "../../admin/usd-schema.ts";
import { ModelModeSchema, PRICE_FIELDS, priceView, type Price } from "../../pricing/price.ts";

/** A unit price: USD, zero allowed (free), at most 1,000,000 USD per unit. */
const unitPrice = v.optional(v.nullable(usdAmountSchema({ allowZero: true, maxMicros: 1_000_000 * 1_000_000 })));

const SetPriceSchema = v.strictObject({
  model: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  mode: v.optional(ModelModeSchema, "chat"),
  ...Object.fromEntries(PRICE_FIELDS.map(([name]) => [name, unitPrice])),
} as const);

/** GET and POST /v1/admin/prices. */
export function adminPriceRoutes(services: Services) {
  return new Hono<AppEnv>()
    .get("/prices", (c) => c.json({ prices: services.prices.list().map(priceView) }))
    .post("/prices", async (c) => {
      const body = parseOrThrow(SetPriceSchema, await readJsonBody(c.req.raw)) as Record<string, unknown> & {
        model: string;
        mode: Price["mode"];
      };
      const price = { model: body.model, mode: body.mode } as Price;
      for (const [name, field] of PRICE_FIELDS) price[field] = (body[name] as number | null | undefined) ?? null;
      await services.prices.set(price, services.now());
      await services.changes.bump();
      return c.json(priceView(price));
    });
}
