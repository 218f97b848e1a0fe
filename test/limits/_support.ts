import type { Principal } from "../../src/auth/key-cache.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { Limits } from "../../src/limits/rate-limiter.ts";

/** Helpers of the tests that drive RateLimiter directly. */

/** The free plan's limits. */
export const FREE: Limits = { requestsPerMinute: 10, tokensPerMinute: 1000 };

/** A key of account `userId`; with `own` limits, a key with buckets of its own (`key:tok_<userId>`). */
export function principal(userId: string, own: Partial<Limits> = {}): Principal {
  return {
    tokenId: `tok_${userId}`,
    role: "user",
    tokenStatus: "active",
    expiresAt: null,
    permissions: new Set(),
    models: null,
    requestsPerMinute: own.requestsPerMinute ?? null,
    tokensPerMinute: own.tokensPerMinute ?? null,
    userId,
    userStatus: "active",
    plan: "free",
  };
}

/** The GatewayError `run` throws; fails when it admits. */
export function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("admitted");
}

/** What a row of rate_windows holds in all: the sums of its requests and tokens windows. */
export interface RowTotals {
  requests: number;
  tokens: number;
}

/** The sums of a rate_windows row's windows. */
export function totalsOf(row: { windows: string }): RowTotals {
  // Flat (slot offset, amount) lists: the amounts are every second number.
  const { requests, tokens } = JSON.parse(row.windows) as Record<keyof RowTotals, number[]>;
  const sum = (numbers: number[]) => numbers.reduce((total, number, index) => (index % 2 === 1 ? total + number : total), 0);
  return { requests: sum(requests), tokens: sum(tokens) };
}
