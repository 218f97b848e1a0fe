import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate.ts";
import { openDatabase, type OpenDatabase } from "../../src/db/open-database.ts";

/** A migrated database file in a temp folder of its own, for tests that drive the database directly. */
export interface TempDatabase {
  database: OpenDatabase;
  /** Closes the database and removes its folder. */
  remove(): Promise<void>;
}

/** Opens and migrates a new database file in a temp folder named after `prefix`, migrations timed by `now`. */
export async function openTempDatabase(prefix: string, now: () => number): Promise<TempDatabase> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const database = openDatabase(`file:${join(dir, "gateway.db")}`);
  await migrate(database.db, now);
  return {
    database,
    async remove() {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
