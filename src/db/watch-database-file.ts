import type { DatabaseWritable } from "./database-writable.ts";

/** A file's device and inode, or null when no file is at the path (RuntimeHost.fileIdentity). */
export type FileIdentity = (path: string) => string | null;

/**
 * A check, run with each heartbeat, that the database file at `path` is still the one opened:
 * SQLite keeps writing to a file removed or replaced under it (an operator's `rm -r data/`, a
 * backup restored while the gateway runs) without an error, and the next start would open an
 * empty or an older database. When it is not, `writable` is told the database is lost.
 */
export function watchDatabaseFile(path: string, identityOf: FileIdentity, writable: DatabaseWritable): () => void {
  const opened = identityOrUnknown(identityOf, path);
  return () => {
    if (opened === null || opened === UNKNOWN) return;
    const now = identityOrUnknown(identityOf, path);
    // A folder that cannot be searched (EACCES) says nothing of the file: no verdict this time.
    if (now === opened || now === UNKNOWN) return;
    writable.lost(now === null ? `the database file ${path} was removed` : `another file was put in place of the database file ${path}`);
  };
}

/** What a stat that failed for another reason than a missing file gives. */
const UNKNOWN = Symbol("unknown");

function identityOrUnknown(identityOf: FileIdentity, path: string): string | null | typeof UNKNOWN {
  try {
    return identityOf(path);
  } catch {
    return UNKNOWN;
  }
}
