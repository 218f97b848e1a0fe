import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Top-up idempotency records are kept for a limited time (top-up.ts): each top-up deletes
 * those past it, which without this index would scan every record ever written.
 */
export const idempotencyExpiry: Migration = {
  id: "015-idempotency-expiry",
  async up(db: Kysely<unknown>) {
    await sql`create index idempotency_records_created on idempotency_records (created_at)`.execute(db);
  },
};
