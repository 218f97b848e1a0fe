import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Rate limits count over a sliding minute instead of refilling buckets
 * (src/limits/minute-window.ts). Each instance publishes, per bucket (`user:<id>` or
 * `key:<id>`), what it admitted itself in the last minute, by 100 ms slot, as JSON (see
 * RateWindowsTable): the others count it until it ages out, so a row is the whole of its
 * writer's state, not a running total, and one a minute old holds nothing. Keyed by instance
 * first: each instance writes its own rows and reads the others'. rate_usage (totals and bucket levels) is dropped: what it held was at most a
 * minute old, so the first start after this migration begins with empty windows.
 */
export const rateWindows: Migration = {
  id: "017-rate-windows",
  async up(db: Kysely<unknown>) {
    await sql`drop table rate_usage`.execute(db);
    await sql`create table rate_windows (
      instance_id text not null, bucket text not null,
      updated_at integer not null,
      windows text not null,
      primary key (instance_id, bucket)
    ) without rowid`.execute(db);
  },
};
