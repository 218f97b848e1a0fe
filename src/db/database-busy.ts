/**
 * Whether `error` is SQLite's SQLITE_BUSY: another connection held the write lock past the
 * busy timeout (an instance stopped inside a transaction, a long write of another program).
 * The transaction it failed was rolled back, so nothing was written and trying again later
 * can succeed.
 */
export function isDatabaseBusy(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "SQLITE_BUSY";
}
