import type { SqliteDatabase, SqliteStatement } from "kysely";
import { isTransactionControl, type NativeDatabase } from "./sync-sql.ts";

/**
 * The statement with `reader` read once: Kysely asks it on every execution, and libsql
 * answers through a native call that was a tenth of the hot path's CPU.
 */
function withReaderFlag(statement: SqliteStatement): SqliteStatement {
  const reader = statement.reader;
  return {
    reader,
    all: (parameters) => statement.all(parameters),
    run: (parameters) => statement.run(parameters),
    iterate: (parameters) => statement.iterate(parameters),
  };
}

/** Distinct SQL texts kept prepared; past it the oldest is dropped. */
const MAX_STATEMENTS = 256;

/** A statement that executes `sql` (transaction control, see isTransactionControl). */
function executed(database: NativeDatabase, sql: string): SqliteStatement {
  const run = () => {
    database.exec(sql);
    return { changes: 0, lastInsertRowid: 0 };
  };
  return { reader: false, all: () => (run(), []), run, iterate: () => (run(), [][Symbol.iterator]()) };
}

/**
 * Wraps a better-sqlite3-style database so `prepare` reuses statements by SQL text. Kysely's
 * SQLite driver prepares every query afresh; the hot path repeats a handful of texts, and
 * preparing was a fifth of a request's CPU in profiles. Transaction control is executed
 * instead, as SyncSql does.
 */
export function withStatementCache(database: SqliteDatabase & NativeDatabase): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      return database.close();
    },
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached) {
        // Re-insert: Map order then tracks recency for eviction.
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = isTransactionControl(sql) ? executed(database, sql) : withReaderFlag(database.prepare(sql));
      cache.set(sql, statement);
      if (cache.size > MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
      return statement;
    },
  };
}
