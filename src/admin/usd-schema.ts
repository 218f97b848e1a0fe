import * as v from "valibot";
import { usdToMicros } from "../lib/money.ts";

/**
 * A USD amount from a client, as micro-USD: a JSON number (not a string), finite, with at
 * most 6 decimals, above zero (or at zero when `allowZero`), at most `maxMicros`.
 */
export function usdAmountSchema(options: { allowZero: boolean; maxMicros: number }) {
  const bound = options.allowZero ? "at least 0" : "greater than 0";
  return v.pipe(
    v.number("must be a number of USD"),
    v.finite("must be a finite number"),
    v.check((n) => (options.allowZero ? n >= 0 : n > 0), `must be ${bound}`),
    v.check((n) => usdToMicros(n) !== null, "must have at most 6 decimal places"),
    v.transform((n) => usdToMicros(n)!),
    v.maxValue(options.maxMicros, `must be at most ${options.maxMicros / 1_000_000} USD`),
  );
}
