import { sql, type Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { withWriteLock } from "./write-lock-wait.ts";

/**
 * Runs `fn` in a transaction that takes the write lock at BEGIN (BEGIN IMMEDIATE). A plain
 * deferred transaction that reads and then writes can fail at once with SQLITE_BUSY when
 * another process wrote in between; an immediate one waits out the busy timeout instead,
 * so read-check-write sequences (idempotency, balances) are safe across processes.
 *
 * Every write goes through here (or through a WriteTurn), never as a statement of its own:
 * libsql leaves a statement that failed with SQLITE_BUSY unfinished (it has no reset), and
 * a connection with an unfinished statement never commits what it writes outside an explicit
 * transaction: a heartbeat that waited out the busy timeout kept the write lock from then
 * on, and every instance sharing the database stalled. BEGIN is executed, not prepared
 * (isTransactionControl), so one that fails leaves nothing unfinished.
 */
export async function writeTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return withWriteLock(db, (beginFailed) =>
    db.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection).catch((error: unknown) => {
        throw beginFailed(error);
      });
      try {
        const result = await fn(connection);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {});
        throw error;
      }
    }),
  );
}

