import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { afterTurn } from "../lib/next-turn.ts";
import { latestOf, PeerReads, type PeerRow } from "./peer-reads.ts";
import type { PublishedBucket, RateLimiter } from "./rate-limiter.ts";
import { latestWrites, pruneRateUsage, readChangedPage, readRowsSince, upsertRateUsage, type RowKey } from "./rate-usage-rows.ts";

/**
 * A minute refills any bucket not in debt: a row its instance has not added to for this long
 * is pruned, and one older than this tells a starting instance nothing.
 */
const REFILL_MS = 60_000;
/**
 * Rows written per transaction, and read per statement: a millisecond or two of work each, with
 * a turn of the event loop between them, so requests are served however many buckets are active.
 */
const ROWS_PER_TURN = 250;

/** What the exchange needs of this instance's registration (InstanceRegistry). */
export interface ExchangingInstance {
  readonly id: string;
  /** Whether no other live instance shares the database. */
  readonly alone: boolean;
}

/**
 * Makes rate limits hold across instances sharing a database, and across a restart. Each
 * instance counts in memory what its buckets admit (RateLimiter); every poll of the change
 * feed, off the request path, it adds what it admitted since the last exchange to its rows of
 * rate_usage, with its buckets' levels, reads the other instances' rows that changed since its
 * last read, charges each bucket here with what the others admitted since and lowers it to
 * their levels. So a limit is exceeded by at most what the other instances admit in two poll
 * intervals (one for them to write it, one for this instance to read it).
 *
 * An exchange runs on the thread that serves requests, so it works in pages of a few hundred
 * rows and lets the event loop turn between them: each page of its write is a transaction of
 * its own, and each page of its read a statement. Each transaction writes its rows at a time of
 * its own, later than the one before, so a reader skips the rows it has read (see PeerReads).
 *
 * An instance alone on its database reads nothing, but still writes what it admitted with
 * those buckets' levels, for whichever gateway starts next, should this one be killed. Its
 * first write with company, its first after a time alone, and its first after another
 * instance started or stopped, also publish the level of every bucket not full, so an
 * instance that has just joined begins from them. At a graceful stop it writes those levels
 * once more (`retire`), and at start it begins from the levels of the last minute (`seed`):
 * a restart, a new instance, or one started after a crash (less what was admitted in the
 * last poll interval) does not start with full buckets.
 */
export class RateExchange {
  #reads = new PeerReads(REFILL_MS);
  /** Whether the next write publishes every bucket not full (see the class's comment). */
  #publishAll = true;
  /** The time of this instance's last write transaction. */
  #writtenAt = 0;
  /** The exchange or retirement under way: they take turns, so their writes' times keep their order. */
  #busy: Promise<void> = Promise.resolve();

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
    const rows = await readRowsSince(this.db, this.now() - REFILL_MS);
    this.#take(rows);
    // One statement, one snapshot: every row up to each instance's latest time was in it.
    this.#reads.readUpTo(latestOf(rows), this.now());
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
   * One exchange (only the write when this instance is alone), then the buckets that are
   * full and idle are let go, at the same cadence.
   */
  run(): Promise<void> {
    return this.#inTurn(async () => {
      try {
        await this.#exchange();
      } finally {
        this.limiter.evictFull();
      }
    });
  }

  /**
   * At a graceful stop: writes what was admitted since the last exchange and the level of
   * every bucket not full, in one transaction (none when there is nothing), for the instance
   * that starts next and for the others. The rows go when another instance finds this one gone.
   */
  retire(): Promise<void> {
    return this.#inTurn(async () => {
      const mine = this.limiter.takeAdmitted(true);
      if (mine.length === 0) return;
      const at = this.#nextWriteAt();
      await writeTransaction(this.db, async (trx) => {
        for (let start = 0; start < mine.length; start += ROWS_PER_TURN) {
          await upsertRateUsage(trx, this.instance.id, mine.slice(start, start + ROWS_PER_TURN), at);
        }
      });
    });
  }

  #inTurn(work: () => Promise<void>): Promise<void> {
    const done = this.#busy.then(work);
    this.#busy = done.catch(() => {});
    return done;
  }

  async #exchange(): Promise<void> {
    if (this.instance.alone) {
      // Nobody reads the rows meanwhile, but the next gateway to start does (seed): written,
      // they outlive a lone gateway killed without a graceful stop, which would otherwise leave
      // its successor full buckets. Nothing admitted, nothing written: an idle gateway stays idle.
      this.#reads.clear();
      this.#publishAll = true;
      const mine = this.limiter.takeAdmitted();
      if (mine.length > 0) await this.#write(mine);
      return;
    }
    await this.#write(this.limiter.takeAdmitted(this.#publishAll));
    this.#publishAll = false;
    await this.#read();
  }

  /**
   * Adds `mine` to this instance's rows, a page per transaction, and in the last prunes those
   * it has not added to for a minute (with nothing to add, that is the one transaction). What
   * a failed transaction did not write is counted again. The levels were taken before the
   * first page, so a later page's, dated a little later, read a little low: never too high.
   */
  async #write(mine: readonly PublishedBucket[]): Promise<void> {
    for (let start = 0; start === 0 || start < mine.length; start += ROWS_PER_TURN) {
      if (start > 0) await afterTurn();
      const at = this.#nextWriteAt();
      const last = start + ROWS_PER_TURN >= mine.length;
      try {
        await writeTransaction(this.db, async (trx) => {
          await upsertRateUsage(trx, this.instance.id, mine.slice(start, start + ROWS_PER_TURN), at);
          if (last) await pruneRateUsage(trx, this.instance.id, at - REFILL_MS);
        });
      } catch (error) {
        this.limiter.returnAdmitted(mine.slice(start));
        throw error;
      }
    }
  }

  /** A time for a write transaction: now, or just after the last one if the clock has not moved on (or went back). */
  #nextWriteAt(): number {
    this.#writtenAt = Math.max(this.now(), this.#writtenAt + 1);
    return this.#writtenAt;
  }

  /**
   * Reads the other instances' rows changed since the last read, a page per statement. The
   * pages are not one snapshot: an instance may commit while they are read, and rows it wrote
   * then may fall in a page already read. So what the read is noted to have found is what was
   * committed before its first page, and rows committed since are read again next time.
   */
  async #read(): Promise<void> {
    const latest = await latestWrites(this.db, this.instance.id);
    const readFrom = this.#reads.readFrom();
    for (let after: RowKey | null = null; ; await afterTurn()) {
      const page = await readChangedPage(this.db, this.instance.id, readFrom, after, ROWS_PER_TURN);
      this.#take(page);
      if (page.length < ROWS_PER_TURN) break;
      after = page[page.length - 1]!;
    }
    this.#reads.readUpTo(latest, this.now());
  }

  /** Charges what `rows` grew by since read, then lowers to their levels (see PeerReads). */
  #take(rows: readonly PeerRow[]): void {
    const { growth, levels } = this.#reads.take(rows, this.now());
    for (const usage of growth) this.limiter.chargeShared(usage);
    for (const level of levels) this.limiter.lowerShared(level);
  }
}
