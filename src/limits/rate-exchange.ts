import type { Kysely } from "kysely";
import type { Database, RateWindowsTable } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { afterTurn } from "../lib/next-turn.ts";
import { WINDOW_MS } from "./minute-window.ts";
import { latestOf, PeerReads } from "./peer-reads.ts";
import type { PublishedWindows, RateLimiter } from "./rate-limiter.ts";
import { latestWrites, publishedOf, pruneRateWindows, readChangedPage, readRowsSince, upsertRateWindows, type RowKey } from "./rate-window-rows.ts";

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
 * instance counts in memory what it admits from each bucket over the last minute
 * (RateLimiter); every poll of the change feed, off the request path, it writes the windows of
 * the buckets that changed since (its own admissions only, by slot), reads the other
 * instances' rows that changed since its last read, and counts their windows against its
 * limits until they age out. So a limit is exceeded by at most what the other instances admit
 * in two poll intervals (one for them to write it, one for this instance to read it).
 *
 * An exchange runs on the thread that serves requests, so it works in pages of a few hundred
 * rows and lets the event loop turn between them: each page of its write is a transaction of
 * its own, and each page of its read a statement. Each transaction writes its rows at a time of
 * its own, later than the one before, so a reader skips the rows it has read (see PeerReads).
 *
 * A row is the whole of its writer's window of a bucket, so an instance that starts reads the
 * rows of the last minute (`seed`), whoever wrote them: one beside others, or one that follows
 * an instance that stopped, or died after its last exchange, does not start with empty windows.
 * An instance alone on its database reads nothing after its first exchange alone (which
 * reads what the instances that just left wrote last), but still writes, for whichever gateway
 * starts next; at a graceful stop it writes once more (`retire`). Rows are deleted, by any
 * instance, once a minute old, when all they held has aged out.
 */
export class RateExchange {
  #reads = new PeerReads(WINDOW_MS);
  /** The time of this instance's last write transaction. */
  #writtenAt = 0;
  /** Whether the last exchange found this instance alone, and so read nothing. */
  #wasAlone = false;
  /** The exchange or retirement under way: they take turns, so their writes' times keep their order. */
  #busy: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limiter: RateLimiter,
    private readonly instance: ExchangingInstance,
    private readonly now: () => number,
  ) {}

  /** At start, before any request, whether alone or not: takes the windows of every row of the last minute. */
  async seed(): Promise<void> {
    const rows = await readRowsSince(this.db, this.now() - WINDOW_MS);
    this.#take(rows);
    // One statement, one snapshot: every row up to each instance's latest time was in it.
    this.#reads.readUpTo(latestOf(rows), this.now());
  }

  /**
   * One exchange (only the write when this instance is alone, after one last read), then the
   * buckets that hold nothing are let go, at the same cadence.
   */
  run(): Promise<void> {
    return this.#inTurn(async () => {
      try {
        await this.#exchange();
      } finally {
        this.limiter.evictIdle();
      }
    });
  }

  /** At a graceful stop: writes the windows that changed since the last exchange, in one transaction (none when none did). */
  retire(): Promise<void> {
    return this.#inTurn(async () => {
      const mine = this.limiter.takeChanged();
      if (mine.length === 0) return;
      const at = this.#nextWriteAt();
      await writeTransaction(this.db, async (trx) => {
        for (let start = 0; start < mine.length; start += ROWS_PER_TURN) {
          await upsertRateWindows(trx, this.instance.id, mine.slice(start, start + ROWS_PER_TURN), at);
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
    const mine = this.limiter.takeChanged();
    if (this.instance.alone) {
      // Nobody reads the rows meanwhile, but the next gateway to start does (seed): written,
      // they outlive a lone gateway killed without a graceful stop, which would otherwise leave
      // its successor empty windows. Nothing admitted, nothing written: an idle gateway stays idle.
      if (mine.length > 0) await this.#write(mine);
      // The instances gone since the last read wrote their last rows before they went (one that
      // retires, as it stops): read once more, so those count here for the rest of their minute.
      if (!this.#wasAlone) await this.#read();
      this.#wasAlone = true;
      this.#reads.clear();
      return;
    }
    this.#wasAlone = false;
    await this.#write(mine);
    await this.#read();
  }

  /**
   * Writes `mine`, a page per transaction, and in the last deletes the rows a minute old (with
   * nothing to write, that is the one transaction). What a failed transaction did not write is
   * marked to be written again.
   */
  async #write(mine: readonly PublishedWindows[]): Promise<void> {
    for (let start = 0; start === 0 || start < mine.length; start += ROWS_PER_TURN) {
      if (start > 0) await afterTurn();
      const at = this.#nextWriteAt();
      const last = start + ROWS_PER_TURN >= mine.length;
      try {
        await writeTransaction(this.db, async (trx) => {
          await upsertRateWindows(trx, this.instance.id, mine.slice(start, start + ROWS_PER_TURN), at);
          // A minute before now, not before `at`: after the clock stepped back `at` runs ahead of it, and would delete rows that still count.
          if (last) await pruneRateWindows(trx, this.now() - WINDOW_MS);
        });
      } catch (error) {
        this.limiter.returnChanged(mine.slice(start));
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

  /** Counts the windows of `rows` against this instance's limits, each in place of what its writer published before. */
  #take(rows: readonly RateWindowsTable[]): void {
    for (const row of rows) {
      const published = publishedOf(row);
      if (published) this.limiter.setPeerWindows(row.instance_id, published);
    }
  }
}
