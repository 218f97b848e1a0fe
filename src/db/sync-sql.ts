import type { Kysely, SqliteDatabase } from "kysely";
import type { Database } from "./schema.ts";

/** Synchronous prepared statements on the same connection Kysely drives. */
export interface SyncSql {
  run(sql: string, params: readonly unknown[]): void;
  get<T>(sql: string, params: readonly unknown[]): T | undefined;
}

/** SyncSql over a better-sqlite3-style database (libsql), whose prepare is cached. */
export function syncSqlOver(database: SqliteDatabase): SyncSql {
  return {
    run: (sql, params) => void database.prepare(sql).run(params),
    get: <T>(sql: string, params: readonly unknown[]) => database.prepare(sql).all(params)[0] as T | undefined,
  };
}

/**
 * Runs `fn` synchronously inside BEGIN IMMEDIATE ... COMMIT on Kysely's connection, holding
 * Kysely's connection lock so no other query interleaves. The billing batches take this path
 * instead of the query builder: building and awaiting each statement was about half of a
 * priced request's CPU, and these few statement texts never change.
 */
export function syncWriteTransaction<T>(db: Kysely<Database>, sql: SyncSql, fn: (sql: SyncSql) => T): Promise<T> {
  return db.connection().execute(async () => {
    sql.run("BEGIN IMMEDIATE", []);
    try {
      const result = fn(sql);
      sql.run("COMMIT", []);
      return result;
    } catch (error) {
      try {
        sql.run("ROLLBACK", []);
      } catch {
        // Already rolled back by SQLite (for example after SQLITE_FULL); nothing to undo.
      }
      throw error;
    }
  });
}
