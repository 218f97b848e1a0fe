/** Micro-USD per USD: money is integer micro-USD inside the gateway. */
export const MICROS_PER_USD = 1_000_000;

/** The USD number the API shows for an amount of micro-USD. */
export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}

/**
 * Micro-USD for a USD amount a client sent, or null when it is not a finite number with
 * at most 6 decimals, or too large to count exactly in micro-USD (above 9e9 USD: schemas
 * bound amounts before they get here). Decimal places are read from the number's shortest
 * text form, so 0.1 is accepted and 1.0000001 is not.
 */
export function usdToMicros(usd: number): number | null {
  if (!Number.isFinite(usd)) return null;
  const text = String(Math.abs(usd));
  if (text.includes("e")) {
    const [mantissa, exponent] = text.split("e");
    const fraction = mantissa!.split(".")[1]?.length ?? 0;
    if (fraction - Number(exponent) > 6) return null;
  } else if ((text.split(".")[1]?.length ?? 0) > 6) {
    return null;
  }
  const micros = Math.round(usd * MICROS_PER_USD);
  return Number.isSafeInteger(micros) ? micros : null;
}
