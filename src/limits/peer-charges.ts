import type { RateUsageTable } from "../db/schema.ts";
import type { BucketLevels, BucketUsage } from "./rate-limiter.ts";

/** Another instance's row of rate_usage, as read: its running totals for a bucket since the row was made, and its levels. */
export type PeerRow = RateUsageTable;

/** The other instances' totals at the last read, by instance and bucket. */
export type SeenTotals = Map<string, { requests: number; tokens: number }>;

/** What the other instances' rows tell this instance: what to charge, and the levels to lower to. */
export interface PeerCharges {
  /** What the rows seen before grew by since: admitted by their instance in between. */
  growth: BucketUsage[];
  /** Every row's levels; empty for a row written before rows had them. */
  levels: BucketLevels[];
  /** The totals read, for the next read. */
  seen: SeenTotals;
}

/**
 * What the other instances admitted since their rows were last read, and what they know of
 * their buckets. A row seen before is charged what it grew by since (`seen` then). A row not
 * seen before is charged nothing: it may hold hours of admissions, made before this instance
 * started or while it was alone, or since its instance was taken for dead and its rows
 * dropped (its request count went down); its level includes what of them counts, and
 * charging the totals too would count them twice. Tokens may shrink: a reservation settled
 * below its estimate. Every row's levels are lowered to as well, after the growth is charged
 * (a level includes its writer's admissions, so it is the least of the two that counts, not
 * their sum): a level never exceeds what is really left, so lowering to it never charges too much.
 */
export function peerCharges(seen: SeenTotals, rows: readonly PeerRow[]): PeerCharges {
  const growth: BucketUsage[] = [];
  const levels: BucketLevels[] = [];
  const next: SeenTotals = new Map();
  for (const row of rows) {
    // Instance ids and bucket names hold no space.
    const id = `${row.instance_id} ${row.bucket}`;
    next.set(id, { requests: row.requests, tokens: row.tokens });
    const limits = { requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute };
    if (row.requests_level !== null || row.tokens_level !== null) {
      levels.push({ bucket: row.bucket, requestsLevel: row.requests_level, tokensLevel: row.tokens_level, at: row.updated_at, ...limits });
    }
    const before = seen.get(id);
    if (before === undefined || row.requests < before.requests) continue;
    const requests = row.requests - before.requests;
    const tokens = row.tokens - before.tokens;
    if (requests === 0 && tokens === 0) continue;
    growth.push({ bucket: row.bucket, requests, tokens, ...limits });
  }
  return { growth, levels, seen: next };
}
