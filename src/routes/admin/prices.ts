import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, objectOnly } from "../../lib/schemas.ts";
import { usdAmountSchema } from "../../admin/usd-schema.ts";
import { IMAGE_PRICE_KEY, LONG_PROMPT_FIELDS, ModelModeSchema, PRICE_FIELDS, priceView, type LongPromptTier, type Price } from "../../pricing/price.ts";

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

/** The token prices above a prompt length: a threshold and at least one price, each as named at the top level. */
const longPromptSchema = v.optional(
  v.nullable(
    v.pipe(
      objectOnly(v.strictObject({
        above_tokens: v.pipe(v.number("must be a number of tokens"), v.safeInteger("must be an integer"), v.minValue(1, "must be at least 1")),
        ...Object.fromEntries(LONG_PROMPT_FIELDS.map(([name]) => [name, unitPrice])),
      } as const)),
      v.check((tier) => LONG_PROMPT_FIELDS.some(([name]) => (tier as Record<string, unknown>)[name] != null), "must set at least one price, or be null"),
    ),
  ),
);

const SetPriceSchema = v.pipe(
  v.strictObject({
    model: ModelIdSchema,
    mode: v.optional(ModelModeSchema, "chat"),
    image_prices: imagePricesSchema,
    long_prompt: longPromptSchema,
    ...Object.fromEntries(PRICE_FIELDS.map(([name]) => [name, unitPrice])),
  } as const),
  // A prompt's length prices only what reads a prompt; other modes bill by their own units.
  v.forward(v.check((body) => body.long_prompt == null || body.mode === "chat", "is for chat models only"), ["long_prompt"]),
);

/** A long-prompt tier from its validated body (micro-USD), or null. */
function tierFromBody(body: Record<string, unknown> | null | undefined): LongPromptTier | null {
  if (!body) return null;
  const tier = { aboveTokens: body.above_tokens as number } as LongPromptTier;
  for (const [name, field] of LONG_PROMPT_FIELDS) tier[field] = (body[name] as number | null | undefined) ?? null;
  return tier;
}

/** GET and POST /v1/admin/prices. */
export function adminPriceRoutes(services: Services) {
  return new Hono<AppEnv>()
    .get("/prices", (c) => c.json({ prices: services.prices.list().map(priceView) }))
    .post("/prices", async (c) => {
      const body = parseOrThrow(SetPriceSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs)) as Record<string, unknown> & {
        model: string;
        mode: Price["mode"];
        image_prices?: Record<string, number> | null;
        long_prompt?: Record<string, unknown> | null;
      };
      const price = { model: body.model, mode: body.mode, imagePrices: body.image_prices ?? null, longPrompt: tierFromBody(body.long_prompt) } as Price;
      for (const [name, field] of PRICE_FIELDS) price[field] = (body[name] as number | null | undefined) ?? null;
      await services.changes.commit({ kind: "price", subject: price.model }, (trx) => services.prices.set(trx, price, services.now()));
      return c.json(priceView(price));
    });
}
