import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Prompt-cache writes priced apart from input (micro-USD per 1M tokens), by the lifetime of
 * the cache entry: Anthropic bills a 5-minute write at 1.25x its input price and a 1-hour
 * write at 2x. Null: such a write is charged as input, as before this migration.
 */
export const cacheWritePrices: Migration = {
  id: "009-cache-write-prices",
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("prices").addColumn("cache_write_per_million_micros", "integer").execute();
    await db.schema.alterTable("prices").addColumn("cache_write_1h_per_million_micros", "integer").execute();
  },
};
