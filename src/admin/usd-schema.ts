import * as v from "valibot";
import { microsToUsd, usdToMicros } from "../lib/money.ts";

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
    // Before the decimals: an amount too large for exact micro-USD (1e21) is too large, not
    // too precise.
    v.maxValue(microsToUsd(options.maxMicros), `must be at most ${microsToUsd(options.maxMicros)} USD`),
    v.check((n) => usdToMicros(n) !== null, "must have at most 6 decimal places"),
    v.transform((n) => usdToMicros(n)!),
  );
}
