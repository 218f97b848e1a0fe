import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, objectOnly } from "../../lib/schemas.ts";
import { usdAmountSchema } from "../../admin/usd-schema.ts";
import { IMAGE_PRICE_KEY, ModelModeSchema, PRICE_FIELDS, priceView, type Price } from "../../pricing/price.ts";

/** A unit price: USD, zero allowed (free), at most 1,000,000 USD per unit. */
const unitPrice = v.optional(v.nullable(usdAmountSchema({ allowZero: true, maxMicros: 1_000_000 * 1_000_000 })));

/** Per-image prices by "<width>x<height>/<quality>". */
const imagePricesSchema = v.optional(
  v.nullable(
    v.pipe(
      objectOnly(v.record(
        v.pipe(v.string(), v.regex(IMAGE_PRICE_KEY, 'keys must look like "1024x1024/standard" or "1536x1024/high" (sides of at most 4 digits; quality standard, hd, low, medium or high)')),
        usdAmountSchema({ allowZero: true, maxMicros: 1_000_000 * 1_000_000 }),
      )),
      v.check((prices) => Object.keys(prices).length > 0, "must name at least one size, or be null"),
    ),
  ),
);

const SetPriceSchema = v.strictObject({
  model: ModelIdSchema,
  mode: v.optional(ModelModeSchema, "chat"),
  image_prices: imagePricesSchema,
  ...Object.fromEntries(PRICE_FIELDS.map(([name]) => [name, unitPrice])),
} as const);

/** GET and POST /v1/admin/prices. */
export function adminPriceRoutes(services: Services) {
  return new Hono<AppEnv>()
    .get("/prices", (c) => c.json({ prices: services.prices.list().map(priceView) }))
    .post("/prices", async (c) => {
      const body = parseOrThrow(SetPriceSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)) as Record<string, unknown> & {
        model: string;
        mode: Price["mode"];
        image_prices?: Record<string, number> | null;
      };
      const price = { model: body.model, mode: body.mode, imagePrices: body.image_prices ?? null } as Price;
      for (const [name, field] of PRICE_FIELDS) price[field] = (body[name] as number | null | undefined) ?? null;
      await services.changes.commit({ kind: "price", subject: price.model }, (trx) => services.prices.set(trx, price, services.now()));
      return c.json(priceView(price));
    });
}
