import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Balance leases: a part of an account's balance that one gateway instance has reserved, so
 * it can grant that account's holds in memory instead of one write transaction per request
 * (src/billing/lease-book.ts). Keyed by account, then instance: the hold path reads every
 * lease on one account by that prefix. `open` is 0 once the instance stopped drawing on the
 * lease and what is left of it belongs to requests in flight.
 */
export const balanceLeases: Migration = {
  id: "006-balance-leases",
  async up(db: Kysely<unknown>) {
    await sql`create table balance_leases (
      user_id text not null,
      instance_id text not null,
      amount_micros integer not null,
      open integer not null,
      updated_at integer not null,
      primary key (user_id, instance_id)
    ) without rowid`.execute(db);
  },
};
