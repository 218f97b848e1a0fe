import LibsqlDatabase from "libsql";
import { Kysely, SqliteDialect, type SqliteDatabase } from "kysely";
import type { Database } from "./schema.ts";
import { withStatementCache } from "./statement-cache.ts";
import { syncSqlOver, type NativeDatabase, type SyncSql } from "./sync-sql.ts";

/** An open database: the typed query builder and the means to close it. */
export interface OpenDatabase {
  db: Kysely<Database>;
  /** Prepared statements on the same connection, for the billing hot path. */
  sql: SyncSql;
  /** Whether the URL names a remote libSQL server (sqld, Turso) rather than a local file. */
  remote: boolean;
  close(): Promise<void>;
}

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
    native.exec("PRAGMA busy_timeout = 10000");
    // WAL with synchronous=NORMAL stays consistent after a crash; only the last commits
    // before a power loss (not a process kill) can be lost.
    native.exec("PRAGMA synchronous = NORMAL");
    native.exec("PRAGMA foreign_keys = ON");
  }
  // libsql's Database is better-sqlite3 compatible, the API Kysely's SQLite dialect drives,
  // but its declared types differ in detail, hence the cast.
  const statements = withStatementCache(native as unknown as SqliteDatabase & NativeDatabase);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  return { db, sql: syncSqlOver(native), remote: localPath === null, close: () => db.destroy() };
}
