import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { syncWriteTransaction, type SyncSql } from "./sync-sql.ts";
import { nextTurn } from "../lib/next-turn.ts";
import type { DatabaseWritable } from "./database-writable.ts";

/**
 * Undo steps for the in-memory side of a write job, run newest first, synchronously, when the
 * job's writes are rolled back: memory matches the database again before any other code runs.
 */
export type Journal = (() => void)[];

/** Runs a journal's undo steps, newest first. */
export function undo(journal: Journal): void {
  for (let i = journal.length - 1; i >= 0; i--) journal[i]!();
}

/** Synchronous writes that want to share a commit with the others queued in the same turn. */
export interface TurnJob {
  /** Runs inside the transaction; throwing undoes this job's writes only. */
  run(sql: SyncSql): void;
  /** Called at once, synchronously, when this job's writes are rolled back (its own failure or the commit's). */
  rollback?(): void;
  /** Called once, after the commit (no error) or with what made this job or the commit fail. */
  done(error?: unknown): void;
}

/**
 * One write transaction per event-loop turn for every job queued in that turn: the holds of
 * requests that just arrived and the settlements of those that just finished share one
 * BEGIN IMMEDIATE ... COMMIT, which costs as much as the writes themselves. Each job runs in
 * its own savepoint, so one that fails leaves the others committed.
 */
export class WriteTurn {
  #jobs: TurnJob[] = [];
  #scheduled = false;
  #running: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sql: SyncSql,
    /** Told of each write that failed, to refuse requests while the machine refuses writes. */
    private readonly writable?: DatabaseWritable,
  ) {}

  /** Queues `job` for this turn's transaction. */
  add(job: TurnJob): void {
    this.#jobs.push(job);
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(() => {
      this.#scheduled = false;
      const jobs = this.#jobs;
      this.#jobs = [];
      // One transaction at a time: they share the single connection anyway.
      this.#running = this.#running.then(() => this.#commit(jobs));
    });
  }

  /** Resolves once `job` has committed; rejects with its error (its journal undone by then). */
  run(job: (sql: SyncSql, journal: Journal) => void): Promise<void> {
    const journal: Journal = [];
    return new Promise((resolve, reject) =>
      this.add({ run: (sql) => job(sql, journal), rollback: () => undo(journal), done: (error) => (error === undefined ? resolve() : reject(error)) }),
    );
  }

  /** Resolves once every job queued so far has committed (or failed). */
  idle(): Promise<void> {
    if (this.#jobs.length > 0) return this.run(() => {}).catch(() => {});
    return this.#running;
  }

  async #commit(jobs: TurnJob[]): Promise<void> {
    const failed = new Map<TurnJob, unknown>();
    // Newest first, like each journal: undo steps may restore values a later job changed again.
    const rollBackUnfailed = () => {
      for (let i = jobs.length - 1; i >= 0; i--) if (!failed.has(jobs[i]!)) jobs[i]!.rollback?.();
    };
    try {
      await syncWriteTransaction(this.db, this.sql, rollBackUnfailed, (sql) => {
        // A lone job needs no savepoint: the transaction is its own.
        if (jobs.length === 1) return jobs[0]!.run(sql);
        for (const job of jobs) {
          sql.run("SAVEPOINT turn_job", []);
          try {
            job.run(sql);
          } catch (error) {
            sql.run("ROLLBACK TO turn_job", []);
            failed.set(job, error);
            job.rollback?.();
          }
          sql.run("RELEASE turn_job", []);
        }
      });
    } catch (error) {
      this.writable?.failed(error);
      for (const job of jobs) job.done(failed.get(job) ?? error);
      return;
    }
    for (const error of failed.values()) this.writable?.failed(error);
    for (const job of jobs) job.done(failed.get(job));
  }
}

/** How a TurnBatch's job ended: what `write` returned, or why it failed. */
export type BatchOutcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/**
 * Items pushed during one turn, written by one job of that turn's transaction: `write` sees
 * every item pushed before the job ran, records its in-memory changes in the journal, and
 * `settle` is told how that job ended.
 */
export class TurnBatch<T, R> {
  /** The items of the job queued for the coming transaction, until it runs. */
  #pending: T[] | null = null;

  constructor(
    private readonly turn: WriteTurn,
    private readonly write: (sql: SyncSql, items: T[], journal: Journal) => R,
    private readonly settle: (items: T[], outcome: BatchOutcome<R>) => void,
  ) {}

  push(item: T): void {
    if (this.#pending) {
      this.#pending.push(item);
      return;
    }
    const items = [item];
    this.#pending = items;
    let result: R;
    const journal: Journal = [];
    this.turn.add({
      run: (sql) => {
        this.#pending = null;
        result = this.write(sql, items, journal);
      },
      rollback: () => undo(journal),
      done: (error) => {
        if (this.#pending === items) this.#pending = null;
        this.settle(items, error === undefined ? { ok: true, result } : { ok: false, error });
      },
    });
  }
}
