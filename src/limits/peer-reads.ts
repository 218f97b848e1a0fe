import type { RateUsageTable } from "../db/schema.ts";
import type { BucketLevels, BucketUsage } from "./rate-limiter.ts";

/** Another instance's row of rate_usage, as read: its running totals for a bucket since the row was made, and its levels. */
export type PeerRow = RateUsageTable;

/** What rows read from the other instances tell this instance: what to charge, and the levels to lower to. */
export interface PeerCharges {
  /** What the rows seen before grew by since: admitted by their instance in between. */
  growth: BucketUsage[];
  /** Every row's levels; none for a row written before rows had them. */
  levels: BucketLevels[];
}

/** The latest updated_at of each instance among `rows`. */
export function latestOf(rows: readonly PeerRow[]): Map<string, number> {
  const latest = new Map<string, number>();
  for (const row of rows) latest.set(row.instance_id, Math.max(latest.get(row.instance_id) ?? row.updated_at, row.updated_at));
  return latest;
}

/** A row as last read: its totals then, and when it was read (this instance's clock). */
interface SeenRow {
  requests: number;
  tokens: number;
  readAt: number;
}

/** How far an instance's rows were read: the updated_at up to which a read found them all, and when (this instance's clock). */
interface ReadUpTo {
  updatedAt: number;
  readAt: number;
}

/**
 * What this instance has read of the other instances' rows, so that each read takes only what
 * changed: every row's totals, to charge what it grew by since, and for each instance how far
 * its rows were read, so the next read skips the rows it has not updated since.
 *
 * A row seen before is charged what it grew by since. A row not seen before is charged nothing:
 * it may hold hours of admissions, made before this instance started or while it was alone, or
 * since its instance was taken for dead and its rows dropped (its request count went down); its
 * level includes what of them counts, and charging the totals too would count them twice.
 * Tokens may shrink: a reservation settled below its estimate. Every row's levels are given
 * too, to be lowered to after the growth is charged (a level includes its writer's admissions,
 * so it is the least of the two that counts, not their sum): a level never exceeds what is
 * really left, so lowering to it never charges too much.
 */
export class PeerReads {
  /** By instance and bucket. */
  #rows = new Map<string, SeenRow>();
  /** By instance. */
  #instances = new Map<string, ReadUpTo>();
  #forgottenAt = 0;

  constructor(
    /**
     * A row not read again for this long (it has not changed) is forgotten, as its writer
     * prunes it; should the writer add to it still, it is new here, known by its level. An
     * instance whose rows were not read for this long is forgotten too: it is gone.
     */
    private readonly forgetAfterMs: number,
  ) {}

  /** For each instance read before, the updated_at from which its rows are unread (see readUpTo). */
  readFrom(): Map<string, number> {
    const from = new Map<string, number>();
    for (const [instance, upTo] of this.#instances) from.set(instance, upTo.updatedAt + 1);
    return from;
  }

  /**
   * Notes that a read, done at `now`, found every row of each instance in `latest` written up
   * to the time given for it: its next read skips them. Each write transaction of an instance
   * has a time of its own, later than its last one's (RateExchange), so a row not found was
   * not yet committed, and will carry a later time.
   */
  readUpTo(latest: ReadonlyMap<string, number>, now: number): void {
    for (const [instance, updatedAt] of latest) this.#instances.set(instance, { updatedAt, readAt: now });
  }

  /** Takes `rows`, read at `now`: their growth since last read and their levels; notes them as read. */
  take(rows: readonly PeerRow[], now: number): PeerCharges {
    const growth: BucketUsage[] = [];
    const levels: BucketLevels[] = [];
    for (const row of rows) {
      // Instance ids and bucket names hold no space.
      const id = `${row.instance_id} ${row.bucket}`;
      const before = this.#rows.get(id);
      this.#rows.set(id, { requests: row.requests, tokens: row.tokens, readAt: now });
      const limits = { requestsPerMinute: row.requests_per_minute, tokensPerMinute: row.tokens_per_minute };
      if (row.requests_level !== null || row.tokens_level !== null) {
        levels.push({ bucket: row.bucket, requestsLevel: row.requests_level, tokensLevel: row.tokens_level, at: row.updated_at, ...limits });
      }
      if (before === undefined || row.requests < before.requests) continue;
      const requests = row.requests - before.requests;
      const tokens = row.tokens - before.tokens;
      if (requests === 0 && tokens === 0) continue;
      growth.push({ bucket: row.bucket, requests, tokens, ...limits });
    }
    if (now - this.#forgottenAt >= this.forgetAfterMs) this.#forgetOld(now);
    return { growth, levels };
  }

  /** Forgets everything read: the rows read next are all new. */
  clear(): void {
    this.#rows.clear();
    this.#instances.clear();
  }

  /** How many rows are remembered; for tests. */
  get size(): number {
    return this.#rows.size;
  }

  #forgetOld(now: number): void {
    this.#forgottenAt = now;
    const before = now - this.forgetAfterMs;
    for (const [id, row] of this.#rows) if (row.readAt < before) this.#rows.delete(id);
    for (const [instance, upTo] of this.#instances) if (upTo.readAt < before) this.#instances.delete(instance);
  }
}
