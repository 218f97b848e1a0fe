import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** Synchronous prepared statements on the same connection Kysely drives. */
export interface SyncSql {
  /** Runs a statement; returns how many rows it changed. */
  run(sql: string, params: readonly unknown[]): number;
  get<T>(sql: string, params: readonly unknown[]): T | undefined;
}

/** The part of a better-sqlite3-style statement (libsql's) that SyncSql uses. */
interface NativeStatement {
  run(params: readonly unknown[]): { changes: number | bigint };
  get(params: readonly unknown[]): unknown;
}

/**
 * SyncSql over a better-sqlite3-style database (libsql). Each text is prepared once and kept
 * for the life of the connection: the callers pass a few fixed texts, so there is nothing to
 * evict, and `get` reads its one row without building a result array.
 */
export function syncSqlOver(database: { prepare(sql: string): NativeStatement }): SyncSql {
  const prepared = new Map<string, NativeStatement>();
  const statement = (sql: string) => {
    let found = prepared.get(sql);
    if (!found) prepared.set(sql, (found = database.prepare(sql)));
    return found;
  };
  return {
    run: (sql, params) => Number(statement(sql).run(params).changes),
    get: <T>(sql: string, params: readonly unknown[]) => (statement(sql).get(params) ?? undefined) as T | undefined,
  };
}

/**
 * Runs `fn` synchronously inside BEGIN IMMEDIATE ... COMMIT on Kysely's connection, holding
 * Kysely's connection lock so no other query interleaves. When `fn` or the commit fails,
 * `onRollback` runs right after the rollback, before any other code can observe memory. The billing batches take this path
 * instead of the query builder: building and awaiting each statement was about half of a
 * priced request's CPU, and these few statement texts never change.
 */
export function syncWriteTransaction<T>(db: Kysely<Database>, sql: SyncSql, onRollback: () => void, fn: (sql: SyncSql) => T): Promise<T> {
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
      onRollback();
      throw error;
    }
  });
}
