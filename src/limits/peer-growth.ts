import type { RateUsageTable } from "../db/schema.ts";
import type { BucketUsage } from "./rate-limiter.ts";

/** Another instance's row of rate_usage, as read: its running totals for a bucket since the row was made. */
export type PeerRow = Omit<RateUsageTable, "updated_at">;

/** The other instances' totals at the last read, by instance and bucket. */
export type SeenTotals = Map<string, { requests: number; tokens: number }>;

/**
 * What the other instances admitted since their rows were last read: each row's totals minus
 * those `seen` then. A row not seen then was made since (first used, or used again after its
 * writer pruned it), so all of it is new; so is a row whose request count went down, made
 * again after its instance was taken for dead and its rows dropped. Tokens may shrink: a
 * reservation settled below its estimate. With nothing seen yet (`seen` null: this instance
 * has just started, or was alone), the totals are only noted: they may hold hours of
 * admissions, and what of them fell in the last minute cannot be told.
 */
export function peerGrowth(seen: SeenTotals | null, rows: readonly PeerRow[]): { growth: BucketUsage[]; seen: SeenTotals } {
  const growth: BucketUsage[] = [];
  const next: SeenTotals = new Map();
  for (const row of rows) {
    // Instance ids and bucket names hold no space.
    const id = `${row.instance_id} ${row.bucket}`;
    next.set(id, { requests: row.requests, tokens: row.tokens });
    if (seen === null) continue;
    const before = seen.get(id);
    const fresh = before === undefined || row.requests < before.requests;
    const requests = fresh ? row.requests : row.requests - before.requests;
    const tokens = fresh ? row.tokens : row.tokens - before.tokens;
    if (requests === 0 && tokens === 0) continue;
    growth.push({ bucket: row.bucket, requests, tokens, requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute });
  }
  return { growth, seen: next };
}
