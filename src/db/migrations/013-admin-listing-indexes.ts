import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Indexes for the admin API at an operator's scale (20,000 users and keys):
 * - users and tokens are listed oldest first, by (created_at, id): without an index every
 *   page sorted the whole table (the last page of users 8 ms, of tokens 12 ms);
 * - a new or changed email is checked against the others in any letter case: without an
 *   index on lower(email), a scan of every user.
 * Billing's writes to users (balance, spent, updated_at) and tokens (last_used) touch none of
 * these columns, so they write no page of these indexes; only admin inserts do.
 */
export const adminListingIndexes: Migration = {
  id: "013-admin-listing-indexes",
  async up(db: Kysely<unknown>) {
    await sql`create index users_created on users (created_at, id)`.execute(db);
    await sql`create index users_email_lower on users (lower(email))`.execute(db);
    await sql`create index tokens_created on tokens (created_at, id)`.execute(db);
  },
};
