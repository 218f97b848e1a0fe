import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * What each gateway instance admitted per rate-limit bucket (`user:<id>` or `key:<id>`), so
 * that instances sharing a database charge each other's admissions (src/limits/rate-exchange.ts).
 * Running totals since the row was made: requests, and tokens net of settlement. The bucket's
 * limits come along, so an instance that has not served the bucket yet can make it. Keyed by
 * instance first: each instance writes and prunes its own rows, and reads the others'.
 */
export const rateUsage: Migration = {
  id: "007-rate-usage",
  async up(db: Kysely<unknown>) {
    await sql`create table rate_usage (
      instance_id text not null, bucket text not null,
      requests integer not null, tokens integer not null,
      requests_per_minute integer not null, tokens_per_minute integer not null,
      updated_at integer not null,
      primary key (instance_id, bucket)
    ) without rowid`.execute(db);
  },
};
