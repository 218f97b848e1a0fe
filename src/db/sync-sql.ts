import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { withWriteLock } from "./write-lock-wait.ts";

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

/** The part of a better-sqlite3-style database (libsql's) that SyncSql and the statement cache use. */
export interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  /** Prepares, runs and finalizes `sql` in one call: nothing is left unfinished, whatever the outcome. */
  exec(sql: string): unknown;
}

/**
 * Whether `sql` begins or ends a transaction (a savepoint's ROLLBACK TO aside): such texts
 * run through `exec`, never as prepared statements. libsql leaves a prepared statement that
 * failed with SQLITE_BUSY unfinished, and has no reset: a BEGIN IMMEDIATE that waited out
 * the busy timeout (another process held the write lock) stayed unfinished until that same
 * statement ran again, and meanwhile every COMMIT of the connection failed ("SQL statements
 * in progress"): holds, settlements and heartbeats alike.
 */
export function isTransactionControl(sql: string): boolean {
  return /^\s*(begin|commit|end|rollback)\b(?!\s+to\b)/i.test(sql);
}

/**
 * SyncSql over a better-sqlite3-style database (libsql). Each text is prepared once and kept
 * for the life of the connection: the callers pass a few fixed texts, so there is nothing to
 * evict, and `get` reads its one row without building a result array. Transaction control
 * is executed instead (isTransactionControl).
 */
export function syncSqlOver(database: NativeDatabase): SyncSql {
  const prepared = new Map<string, NativeStatement>();
  const statement = (sql: string): NativeStatement => {
    let found = prepared.get(sql);
    if (!found) {
      const executed = { run: () => (database.exec(sql), { changes: 0 }), get: () => (database.exec(sql), undefined) };
      prepared.set(sql, (found = isTransactionControl(sql) ? executed : database.prepare(sql)));
    }
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
  return withWriteLock(db, (beginFailed) =>
    db.connection().execute(async () => {
      try {
        sql.run("BEGIN IMMEDIATE", []);
      } catch (error) {
        throw beginFailed(error);
      }
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
    }),
  );
}
