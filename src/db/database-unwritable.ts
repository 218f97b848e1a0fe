/** What an operator is told of each SQLite failure that keeps the gateway from writing its database. */
const UNWRITABLE: Record<string, string> = {
  SQLITE_FULL: "the disk holding the database is full",
  SQLITE_READONLY: "the database file or its folder is read-only",
  SQLITE_IOERR: "the disk failed a read or write of the database",
  SQLITE_CANTOPEN: "the database file or its folder cannot be opened",
};

/**
 * Why the database cannot be written when `error` is one of SQLite's storage failures (a full
 * disk, a read-only or vanished file, an I/O error), else null. Such a failure is the
 * machine's, not the request's: the transaction was rolled back, nothing was written, and
 * once the operator frees space or fixes the file the same request can succeed. Extended
 * codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED) count with their primary code.
 */
export function whyDatabaseUnwritable(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0];
  return (primary !== undefined && UNWRITABLE[primary]) || null;
}
