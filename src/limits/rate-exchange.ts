import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { peerGrowth, type SeenTotals } from "./peer-growth.ts";
import type { BucketUsage, RateLimiter } from "./rate-limiter.ts";

/** A row its instance has not added to for this long is pruned: a minute refills any bucket not in debt. */
const PRUNE_AFTER_MS = 60_000;
/** Rows per insert statement: 7 parameters each, well under SQLite's limit on parameters. */
const ROWS_PER_INSERT = 500;

/** What the exchange needs of this instance's registration (InstanceRegistry). */
export interface ExchangingInstance {
  readonly id: string;
  /** Whether no other live instance shares the database. */
  readonly alone: boolean;
}

/**
 * Makes rate limits hold across instances sharing a database. Each instance counts in memory
 * what its buckets admit (RateLimiter); every poll of the change feed, off the request path,
 * one write transaction adds what this instance admitted since the last exchange to its rows
 * of rate_usage, reads the other instances' rows, and charges each bucket here with what the
 * others admitted since the last read. So a limit is exceeded by at most what the other
 * instances admit in two poll intervals (one for them to write it, one for this instance to
 * read it).
 *
 * An instance alone on its database neither writes nor reads. What it admitted while alone is
 * dropped once another instance appears: nobody has read it, and an instance that has read
 * the rows before takes a row it has not seen for new, so all of it would be charged at once.
 */
export class RateExchange {
  /** The other instances' totals at the last read; null until read since this instance started or was alone. */
  #seen: SeenTotals | null = null;
  #wasAlone = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limiter: RateLimiter,
    private readonly instance: ExchangingInstance,
    private readonly now: () => number,
  ) {}

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

  async #exchange(): Promise<void> {
    if (this.instance.alone) {
      this.limiter.dropAdmitted();
      this.#seen = null;
      this.#wasAlone = true;
      return;
    }
    const taken = this.limiter.takeAdmitted();
    const mine = this.#wasAlone ? [] : taken;
    this.#wasAlone = false;
    try {
      await writeTransaction(this.db, async (trx) => {
        await this.#write(trx, mine);
        const rows = await trx
          .selectFrom("rate_usage")
          .select(["instance_id", "bucket", "requests", "tokens", "requests_per_minute", "tokens_per_minute"])
          .where("instance_id", "!=", this.instance.id)
          .execute();
        // Charged before the commit, from rows the others committed: whether or not this
        // instance's own writes commit, what it read stays read.
        const { growth, seen } = peerGrowth(this.#seen, rows);
        this.#seen = seen;
        for (const usage of growth) this.limiter.chargeShared(usage);
      });
    } catch (error) {
      this.limiter.returnAdmitted(mine);
      throw error;
    }
  }

  /** Adds `mine` to this instance's rows, then prunes those it has not added to for a minute. */
  async #write(trx: Kysely<Database>, mine: readonly BucketUsage[]): Promise<void> {
    const at = this.now();
    for (let start = 0; start < mine.length; start += ROWS_PER_INSERT) {
      const rows = mine.slice(start, start + ROWS_PER_INSERT).map((usage) => ({
        instance_id: this.instance.id,
        bucket: usage.bucket,
        requests: usage.requests,
        tokens: usage.tokens,
        requests_per_minute: usage.requestsPerMinute,
        tokens_per_minute: usage.tokensPerMinute,
        updated_at: at,
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
          })),
        )
        .execute();
    }
    await trx.deleteFrom("rate_usage").where("instance_id", "=", this.instance.id).where("updated_at", "<", at - PRUNE_AFTER_MS).execute();
  }
}
