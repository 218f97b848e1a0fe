import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * What each admin write changed, keyed by the change counter's value after it
 * (src/state/change-feed.ts): an instance that sees the counter move reloads the channels,
 * prices, keys or settings named here instead of all of them, which took 20 ms with 5,000
 * channels and sent every cached key back to the database. `subject` is the channel, token,
 * user or model ID ('' for settings). Only the latest rows are kept.
 */
export const adminChanges: Migration = {
  id: "012-admin-changes",
  async up(db: Kysely<unknown>) {
    await sql`create table admin_changes (
      seq integer primary key, kind text not null, subject text not null
    )`.execute(db);
  },
};
