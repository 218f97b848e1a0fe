import { sql, type Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * Runs `fn` in a transaction that takes the write lock at BEGIN (BEGIN IMMEDIATE). A plain
 * deferred transaction that reads and then writes can fail at once with SQLITE_BUSY when
 * another process wrote in between; an immediate one waits out the busy timeout instead,
 * so read-check-write sequences (idempotency, balances) are safe across processes.
 */
export async function writeTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const result = await fn(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}

