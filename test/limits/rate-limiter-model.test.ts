import { expect, test } from "bun:test";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { SLOT_MS, WINDOW_SLOTS } from "../../src/limits/minute-window.ts";
import { RateLimiter, type Limits, type RateGrant } from "../../src/limits/rate-limiter.ts";
import { seededRandom } from "../helpers/common.ts";
import { principal } from "./_support.ts";

/**
 * RateLimiter against a brute-force model of what it should count: every admission kept, by
 * the 100 ms slot it was admitted in, with its tokens replaced by the actual when it settles
 * while its slot still counts, and what it used above its reservation counted from the
 * settlement when it settles later. A seeded run of random admissions, settlements (late ones, above
 * and below the reservation), limits changed and reservations above the limit; each decision,
 * header and Retry-After is checked against the model, so a failure prints its seed and step.
 */

interface Admission {
  slot: number;
  tokens: number;
  /** 1 for an admission; 0 for usage above a reservation settled after its slot aged out, which counts from the settlement. */
  requests: number;
}

const slotOf = (ms: number) => Math.floor(ms / SLOT_MS);
const agesOutAt = (slot: number) => (slot + WINDOW_SLOTS) * SLOT_MS;
const counts = (slot: number, now: number) => slot > slotOf(now) - WINDOW_SLOTS;

class Model {
  admissions: Admission[] = [];
  used(kind: "requests" | "tokens", now: number): number {
    let used = 0;
    for (const admission of this.admissions) if (counts(admission.slot, now)) used += admission[kind];
    return used;
  }
  /** The wait until `kind` uses at most `target`. */
  waitUntil(kind: "requests" | "tokens", target: number, now: number): number {
    const ends = [now, ...this.admissions.map((admission) => agesOutAt(admission.slot))].filter((at) => at >= now).sort((a, b) => a - b);
    return ends.find((at) => this.used(kind, at) <= target)! - now;
  }
  untilEmpty(kind: "requests" | "tokens", now: number): number {
    const used = this.admissions.filter((admission) => counts(admission.slot, now) && admission[kind] !== 0);
    return used.length === 0 ? 0 : Math.max(...used.map((admission) => agesOutAt(admission.slot))) - now;
  }
}

/** The milliseconds of a reset header: "120ms", "6.5s", "1m0.1s". */
function msOf(duration: string): number {
  const [, minutes, seconds, ms] = /^(?:(\d+)m)?(?:([\d.]+)s)?(?:(\d+)ms)?$/.exec(duration)!;
  return Math.round(Number(minutes ?? 0) * 60_000 + Number(seconds ?? 0) * 1000 + Number(ms ?? 0));
}

const LIMITS: Limits[] = [
  { requestsPerMinute: 10, tokensPerMinute: 1000 },
  { requestsPerMinute: 3, tokensPerMinute: 0 },
  { requestsPerMinute: 0, tokensPerMinute: 500 },
  { requestsPerMinute: 25, tokensPerMinute: 5000 },
];

function run(seed: number): void {
  const random = seededRandom(seed);
  let now = Date.parse("2026-11-21T10:00:00Z") + Math.floor(random() * 1000);
  const rates = new RateLimiter(() => now);
  const model = new Model();
  const pending: { grant: RateGrant; admission: Admission }[] = [];
  let limits = LIMITS[0]!;
  for (let step = 0; step < 3_000; step++) {
    const at = `seed ${seed} step ${step}`;
    const roll = random();
    if (roll < 0.3) {
      now += random() < 0.9 ? Math.floor(random() * 3_000) : Math.floor(random() * 70_000);
    } else if (roll < 0.33) {
      limits = LIMITS[Math.floor(random() * LIMITS.length)]!;
    } else if (roll < 0.5 && pending.length > 0) {
      const { grant, admission } = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
      const actual = Math.floor(random() * 1_500);
      grant.settle(actual);
      if (counts(admission.slot, now)) admission.tokens = actual;
      else if (actual > admission.tokens) model.admissions.push({ slot: slotOf(now), tokens: actual - admission.tokens, requests: 0 });
    } else {
      const estimate = random() < 0.2 ? 0 : Math.floor(random() * 1_200);
      const tokens = limits.tokensPerMinute > 0 ? Math.min(estimate, limits.tokensPerMinute) : estimate;
      const waitRequests = limits.requestsPerMinute > 0 ? model.waitUntil("requests", limits.requestsPerMinute - 1, now) : 0;
      const waitTokens = tokens > 0 && limits.tokensPerMinute > 0 ? model.waitUntil("tokens", limits.tokensPerMinute - tokens, now) : 0;
      let headers: Record<string, string>;
      try {
        const grant = rates.admit(principal("u"), limits, estimate);
        expect({ at, admitted: true }).toEqual({ at, admitted: waitRequests === 0 && waitTokens === 0 });
        const admission = { slot: slotOf(now), tokens, requests: 1 };
        model.admissions.push(admission);
        pending.push({ grant, admission });
        headers = grant.headers;
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        expect({ at, status: error.status, admitted: false }).toEqual({ at, status: 429, admitted: waitRequests === 0 && waitTokens === 0 });
        headers = error.headers as Record<string, string>;
        expect({ at, retryAfter: headers["retry-after"] }).toEqual({ at, retryAfter: String(Math.max(1, Math.ceil(Math.max(waitRequests, waitTokens) / 1000))) });
      }
      for (const kind of ["requests", "tokens"] as const) {
        const limit = kind === "requests" ? limits.requestsPerMinute : limits.tokensPerMinute;
        if (limit === 0) continue;
        expect({ at, kind, remaining: headers[`x-ratelimit-remaining-${kind}`] }).toEqual({ at, kind, remaining: String(Math.max(0, limit - model.used(kind, now))) });
        expect({ at, kind, reset: msOf(headers[`x-ratelimit-reset-${kind}`]!) }).toEqual({ at, kind, reset: model.untilEmpty(kind, now) });
      }
    }
  }
}

test("seeded runs of admissions, settlements and limit changes agree with the model at every step", () => {
  for (let seed = 1; seed <= 20; seed++) run(seed);
});

/**
 * A run whose clock steps back now and then (as NTP may step it), beside the real time that
 * passes: whatever the steps, no refusal asks for a wait past a minute, no header counts
 * outside the limit, and no 59.9 s of real time admits more requests than the limit.
 */
function runWithStepsBack(seed: number): void {
  const random = seededRandom(seed);
  const limits: Limits = { requestsPerMinute: 10, tokensPerMinute: 1000 };
  let real = 0;
  let offset = Date.parse("2026-11-21T10:00:00Z");
  const rates = new RateLimiter(() => real + offset);
  const admittedAt: number[] = [];
  const pending: RateGrant[] = [];
  for (let step = 0; step < 2_000; step++) {
    const at = `seed ${seed} step ${step}`;
    const roll = random();
    if (roll < 0.3) {
      real += Math.floor(random() * 4_000);
    } else if (roll < 0.33) {
      offset -= Math.floor(random() * 3_600_000);
    } else if (roll < 0.5 && pending.length > 0) {
      pending.splice(Math.floor(random() * pending.length), 1)[0]!.settle(Math.floor(random() * 600));
    } else {
      let headers: Record<string, string>;
      try {
        const grant = rates.admit(principal("u"), limits, Math.floor(random() * 300));
        pending.push(grant);
        admittedAt.push(real);
        headers = grant.headers;
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        headers = error.headers as Record<string, string>;
        expect({ at, retryAfterAtMostAMinute: Number(headers["retry-after"]) <= 60 }).toEqual({ at, retryAfterAtMostAMinute: true });
      }
      for (const kind of ["requests", "tokens"] as const) {
        const limit = kind === "requests" ? limits.requestsPerMinute : limits.tokensPerMinute;
        const remaining = Number(headers[`x-ratelimit-remaining-${kind}`]);
        expect({ at, kind, remainingWithinLimit: remaining >= 0 && remaining <= limit }).toEqual({ at, kind, remainingWithinLimit: true });
        expect({ at, kind, resetAtMostAMinute: msOf(headers[`x-ratelimit-reset-${kind}`]!) <= 60_000 }).toEqual({ at, kind, resetAtMostAMinute: true });
      }
    }
  }
  for (const start of admittedAt) {
    const inSpan = admittedAt.filter((at) => at >= start && at < start + 59_900).length;
    expect({ seed, start, atMostTheLimit: inSpan <= limits.requestsPerMinute }).toEqual({ seed, start, atMostTheLimit: true });
  }
}

test("a clock that steps back never makes a wait or a reset longer than a minute, nor lets more than the limit through in a minute of real time", () => {
  for (let seed = 1; seed <= 20; seed++) runWithStepsBack(seed);
});
