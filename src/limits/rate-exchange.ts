import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { peerCharges, type PeerRow, type SeenTotals } from "./peer-charges.ts";
import type { PublishedBucket, RateLimiter } from "./rate-limiter.ts";

/**
 * A minute refills any bucket not in debt: a row its instance has not added to for this long
 * is pruned, and one older than this tells a starting instance nothing.
 */
const REFILL_MS = 60_000;
/** Rows per insert statement: 9 parameters each, well under SQLite's limit on parameters. */
const ROWS_PER_INSERT = 500;

/** What the exchange needs of this instance's registration (InstanceRegistry). */
export interface ExchangingInstance {
  readonly id: string;
  /** Whether no other live instance shares the database. */
  readonly alone: boolean;
}

/**
 * Makes rate limits hold across instances sharing a database, and across a restart. Each
 * instance counts in memory what its buckets admit (RateLimiter); every poll of the change
 * feed, off the request path, one write transaction adds what this instance admitted since the
 * last exchange to its rows of rate_usage, with its buckets' levels, reads the other instances'
 * rows, charges each bucket here with what the others admitted since the last read and lowers
 * it to their levels. So a limit is exceeded by at most what the other instances admit in two
 * poll intervals (one for them to write it, one for this instance to read it).
 *
 * An instance alone on its database neither writes nor reads, and drops its counts. Its first
 * write, its first after a time alone, and its first after another instance started or
 * stopped, also publish the level of every bucket not full, so an instance that has just
 * joined begins from them. At a graceful stop it writes those
 * levels once more (`retire`), and at start it begins from the levels of the last minute
 * (`seed`): a restart, or a new instance, does not start with full buckets.
 */
export class RateExchange {
  /** The other instances' totals at the last read; empty after a start or a time alone. */
  #seen: SeenTotals = new Map();
  /** Whether the next write publishes every bucket not full (see the class's comment). */
  #publishAll = true;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limiter: RateLimiter,
    private readonly instance: ExchangingInstance,
    private readonly now: () => number,
  ) {}

  /**
   * At start, before any request, whether alone or not: lowers each bucket to the lowest level
   * the rows updated in the last minute hold for it, refilled since, and takes those rows as
   * seen. Run it before the registry's first clean-up, which drops a retired instance's rows.
   */
  async seed(): Promise<void> {
    const rows = await this.db.selectFrom("rate_usage").selectAll().where("updated_at", ">=", this.now() - REFILL_MS).execute();
    this.#absorb(rows);
  }

  /**
   * Makes the next write publish every bucket not full: an instance started or stopped. One
   * that has just started may not have found its predecessor's levels (another instance's
   * clean-up may have dropped them first), nor this instance's for buckets it was charged
   * for but never served, which it has no row of.
   */
  publishAllNext(): void {
    this.#publishAll = true;
  }

  /**
   * One exchange (nothing but dropping the counts when this instance is alone), then the
   * buckets that are full and idle are let go, at the same cadence.
   */
  async run(): Promise<void> {
    try {
      await this.#exchange();
    } finally {
      this.limiter.evictFull();
    }
  }

  /**
   * At a graceful stop: writes what was admitted since the last exchange and the level of
   * every bucket not full, in one transaction (none when there is nothing), for the instance
   * that starts next and for the others. The rows go when another instance finds this one gone.
   */
  async retire(): Promise<void> {
    const mine = this.limiter.takeAdmitted(true);
    if (mine.length > 0) await writeTransaction(this.db, (trx) => this.#write(trx, mine));
  }

  async #exchange(): Promise<void> {
    if (this.instance.alone) {
      this.limiter.dropAdmitted();
      this.#seen = new Map();
      this.#publishAll = true;
      return;
    }
    const mine = this.limiter.takeAdmitted(this.#publishAll);
    try {
      await writeTransaction(this.db, async (trx) => {
        await this.#write(trx, mine);
        const rows = await trx.selectFrom("rate_usage").selectAll().where("instance_id", "!=", this.instance.id).execute();
        // Absorbed before the commit, from rows the others committed: whether or not this
        // instance's own writes commit, what it read stays read.
        this.#absorb(rows);
      });
      this.#publishAll = false;
    } catch (error) {
      this.limiter.returnAdmitted(mine);
      throw error;
    }
  }

  /** Charges what the rows grew by since seen, then lowers to their levels (see peerCharges), and notes them as seen. */
  #absorb(rows: readonly PeerRow[]): void {
    const { growth, levels, seen } = peerCharges(this.#seen, rows);
    this.#seen = seen;
    for (const usage of growth) this.limiter.chargeShared(usage);
    for (const level of levels) this.limiter.lowerShared(level);
  }

  /** Adds `mine` to this instance's rows with their levels, then prunes those it has not added to for a minute. */
  async #write(trx: Kysely<Database>, mine: readonly PublishedBucket[]): Promise<void> {
    const at = this.now();
    for (let start = 0; start < mine.length; start += ROWS_PER_INSERT) {
      const rows = mine.slice(start, start + ROWS_PER_INSERT).map((bucket) => ({
        instance_id: this.instance.id,
        bucket: bucket.bucket,
        requests: bucket.requests,
        tokens: bucket.tokens,
        requests_per_minute: bucket.requestsPerMinute,
        tokens_per_minute: bucket.tokensPerMinute,
        updated_at: at,
        requests_level: bucket.requestsLevel,
        tokens_level: bucket.tokensLevel,
      }));
      await trx
        .insertInto("rate_usage")
        .values(rows)
        .onConflict((conflict) =>
          conflict.columns(["instance_id", "bucket"]).doUpdateSet((eb) => ({
            requests: eb("rate_usage.requests", "+", eb.ref("excluded.requests")),
            tokens: eb("rate_usage.tokens", "+", eb.ref("excluded.tokens")),
            requests_per_minute: eb.ref("excluded.requests_per_minute"),
            tokens_per_minute: eb.ref("excluded.tokens_per_minute"),
            updated_at: eb.ref("excluded.updated_at"),
            requests_level: eb.ref("excluded.requests_level"),
            tokens_level: eb.ref("excluded.tokens_level"),
          })),
        )
        .execute();
    }
    await trx.deleteFrom("rate_usage").where("instance_id", "=", this.instance.id).where("updated_at", "<", at - REFILL_MS).execute();
  }
}
