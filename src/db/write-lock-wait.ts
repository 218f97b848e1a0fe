import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { isDatabaseBusy } from "./database-busy.ts";

/** How long a write waits in all for another connection's write lock before it fails as busy. */
export const WRITE_LOCK_WAIT_MS = 10_000;

/**
 * How long SQLite's own busy handler waits inside one BEGIN IMMEDIATE once writes wait
 * between turns: long enough for another instance's ordinary commit, short enough that the
 * event loop is never held for more.
 */
export const BUSY_HANDLER_MS = 5;

/** The databases whose writes wait for the lock between event-loop turns, and for how long in all. */
const waitBetweenTurns = new WeakMap<Kysely<Database>, number>();

/** From now on, writes to `db` wait for the write lock as withWriteLock says, `totalMs` in all. */
export function waitForWriteLockBetweenTurns(db: Kysely<Database>, totalMs: number): void {
  waitBetweenTurns.set(db, totalMs);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A BEGIN IMMEDIATE that found the lock held: nothing ran, so the transaction can start over. */
class LockedOut extends Error {
  constructor(readonly busy: unknown) {
    super("the database's write lock is held");
  }
}

/**
 * What a transaction throws when its BEGIN IMMEDIATE failed with `error`: as withWriteLock
 * passes it, a busy database becomes a signal to start the transaction over after a pause.
 */
export type BeginFailure = (error: unknown) => unknown;

/**
 * Runs `transaction`, which begins with BEGIN IMMEDIATE and throws `beginFailed(error)` when
 * that fails, until it gets the write lock. SQLite's busy handler waits inside BEGIN, and the
 * call is synchronous: while another process held the lock (an instance stopped in the middle
 * of a transaction, a long write of another program) the whole gateway stood still for the
 * busy timeout, streams and health checks included. Once `db` waits between turns, the
 * connection's busy timeout is BUSY_HANDLER_MS; a BEGIN that found the lock held ends the
 * attempt, which gives the connection back (reads go on meanwhile), and after a pause the
 * transaction starts over. It fails as busy after the same total wait as before. Before that
 * (migrations at start) and on a remote database, `transaction` runs once and SQLite waits
 * as configured.
 */
export async function withWriteLock<T>(db: Kysely<Database>, transaction: (beginFailed: BeginFailure) => Promise<T>): Promise<T> {
  const totalMs = waitBetweenTurns.get(db);
  if (totalMs === undefined) return transaction((error) => error);
  // The process's own clock: a step of the wall clock back must not stretch the wait by as much.
  const deadline = performance.now() + totalMs;
  for (let pauseMs = 2; ; pauseMs = Math.min(2 * pauseMs, 100)) {
    try {
      return await transaction((error) => (isDatabaseBusy(error) ? new LockedOut(error) : error));
    } catch (error) {
      if (!(error instanceof LockedOut)) throw error;
      if (performance.now() + pauseMs > deadline) throw error.busy;
    }
    await sleep(pauseMs);
  }
}
