import LibsqlDatabase from "libsql";
import { Kysely, SqliteDialect, type SqliteDatabase } from "kysely";
import type { Database } from "./schema.ts";
import { withStatementCache } from "./statement-cache.ts";
import { syncSqlOver, type NativeDatabase, type SyncSql } from "./sync-sql.ts";
import { BUSY_HANDLER_MS, WRITE_LOCK_WAIT_MS, waitForWriteLockBetweenTurns } from "./write-lock-wait.ts";

/** An open database: the typed query builder and the means to close it. */
export interface OpenDatabase {
  db: Kysely<Database>;
  /** Prepared statements on the same connection, for the billing hot path. */
  sql: SyncSql;
  /** Whether the URL names a remote libSQL server (sqld, Turso) rather than a local file. */
  remote: boolean;
  /**
   * From now on a write that finds another connection's write lock waits for it between
   * event-loop turns, `totalMs` in all (see withWriteLock), not inside SQLite's busy handler,
   * which holds the event loop. Called once the start's migrations are done. A remote
   * database has no local lock: nothing changes.
   */
  waitForWriteLockBetweenTurns(totalMs?: number): void;
  close(): Promise<void>;
}

/** The size a reset WAL file is truncated to: far above a busy gateway's steady state. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** The path of a `file:` URL, or null when the URL names a remote server. */
export function localPathOf(url: string): string | null {
  if (/^(libsql|https?|wss?):\/\//i.test(url)) return null;
  return url.startsWith("file:") ? url.slice("file:".length) : url;
}

/**
 * Opens the database behind `url` through libSQL: a local file (WAL, busy timeout) or a
 * remote libSQL server. Both go through the same driver, so the rest of the code is one path.
 */
export function openDatabase(url: string, authToken?: string): OpenDatabase {
  const localPath = localPathOf(url);
  const remoteUrl = url.replace(/^libsql:\/\//i, "https://");
  // `authToken` is read by libsql's constructor but missing from its type declarations.
  const remoteOptions = { authToken: authToken ?? "" } as LibsqlDatabase.Options;
  const native = localPath === null ? new LibsqlDatabase(remoteUrl, remoteOptions) : new LibsqlDatabase(localPath);
  if (localPath !== null) {
    native.exec("PRAGMA journal_mode = WAL");
    native.exec(`PRAGMA busy_timeout = ${WRITE_LOCK_WAIT_MS}`);
    // WAL with synchronous=NORMAL stays consistent after a crash; only the last commits
    // before a power loss (not a process kill) can be lost.
    native.exec("PRAGMA synchronous = NORMAL");
    native.exec("PRAGMA foreign_keys = ON");
    // A reader that stalls (a stopped process) keeps checkpoints from resetting the WAL, which
    // then grows with every write (161 MB in a soak); once it resets, it is cut back to this.
    native.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  }
  // libsql's Database is better-sqlite3 compatible, the API Kysely's SQLite dialect drives,
  // but its declared types differ in detail, hence the cast.
  const statements = withStatementCache(native as unknown as SqliteDatabase & NativeDatabase);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  const waitForWriteLock = (totalMs = WRITE_LOCK_WAIT_MS) => {
    if (localPath === null) return;
    native.exec(`PRAGMA busy_timeout = ${BUSY_HANDLER_MS}`);
    waitForWriteLockBetweenTurns(db, totalMs);
  };
  return { db, sql: syncSqlOver(native), remote: localPath === null, waitForWriteLockBetweenTurns: waitForWriteLock, close: () => db.destroy() };
}
