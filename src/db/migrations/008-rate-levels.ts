import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * The writer's bucket levels at `updated_at` on each row of rate_usage (null: no such limit,
 * or a row written before this migration). An instance that starts, or that reads a row it has
 * not seen, begins from them rather than from full buckets (src/limits/rate-exchange.ts).
 */
export const rateLevels: Migration = {
  id: "008-rate-levels",
  async up(db: Kysely<unknown>) {
    await sql`alter table rate_usage add column requests_level real`.execute(db);
    await sql`alter table rate_usage add column tokens_level real`.execute(db);
  },
};
