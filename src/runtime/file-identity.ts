import { statSync } from "node:fs";

/** A file's device and inode through Node's fs, which Bun, Deno and Node all provide; null when none is at the path. */
export function fileIdentity(path: string): string | null {
  const found = statSync(path, { throwIfNoEntry: false });
  return found ? `${found.dev}:${found.ino}` : null;
}
